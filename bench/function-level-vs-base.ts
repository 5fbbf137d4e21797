/**
 * `berth eval` of this checkout against an earlier commit (default 4826c82, where issue 18's work
 * started), on the same samples, interleaved round by round (issue 18: all 966 MBKP samples at
 * least 1.5x faster than that commit). The base is checked out beside this one as a git worktree
 * sharing this checkout's node_modules; both are run as whole commands (`node bin/berth.js eval
 * --samples ... -n 2`), timed from spawn to exit, and their pass@1 and per-sample results (`passed`
 * and `result`, line by line) compared.
 *
 *   npx tsx bench/function-level-vs-base.ts [--suite mbkp|mbjsp] [--rounds 3] [--base 4826c82]
 *
 * Data from BERTH_DATA (default ../shared/data). The Kotlin suites need kotlinc and a JDK.
 */
import { execFile } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { runCounted } from './child-cpu.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    suite: { type: 'string', default: 'mbkp' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string', default: '4826c82' },
  },
});
const root = resolve(import.meta.dirname, '..');
const data = resolve(root, process.env.BERTH_DATA ?? '../shared/data');
const suites: Record<string, { problems: string; samples: string }> = {
  mbkp: {
    problems: join(data, 'functional', 'mbxp', 'mbkp_release_v1.2.jsonl'),
    samples: join(data, 'functional', 'mbxp', 'mbkp_samples.jsonl'),
  },
  mbjsp: {
    problems: join(data, 'functional', 'mbxp', 'mbjsp_release_v1.2.jsonl'),
    samples: join(data, 'functional', 'mbxp', 'mbjsp_samples.jsonl'),
  },
};
const suite = suites[values.suite as string];
if (!suite) {
  console.error(`--suite must be one of ${Object.keys(suites).join(', ')}`);
  process.exit(2);
}
const rounds = Number(values.rounds);

const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-eval-base-'));
const baseTree = join(scratch, 'base');
await run('git', ['-C', root, 'worktree', 'add', '--detach', baseTree, values.base as string]);
symlinkSync(join(root, 'node_modules'), join(baseTree, 'node_modules'));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

type Row = { passed: boolean; result: string };

/** One whole `berth eval` of the suite's samples by the checkout at `tree`: seconds (wall, CPU), pass@1, rows. */
async function once(
  tree: string,
  label: string,
): Promise<{ seconds: number; cpu: number; pass: number; rows: Row[] }> {
  const file = join(scratch, `${label}.jsonl`);
  await writeFile(file, await readFile(suite!.samples));
  const start = performance.now();
  const cpu = await runCounted(
    'node',
    [join(tree, 'bin', 'berth.js'), 'eval', '--problems', suite!.problems, '--samples', file, '-n', '2'],
    { env: { ...process.env, CI: '1' }, maxBuffer: 64 << 20, cwd: scratch },
  );
  const seconds = (performance.now() - start) / 1000;
  const rows = (await readFile(`${file}_results.jsonl`, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
  const pass = rows.filter((row) => row.passed === true).length / rows.length;
  return { seconds, cpu, pass, rows };
}

const loadBefore = loadavg()[0] as number;
try {
  // One warm-up each (compile caches, the JVM helper), not counted.
  await once(baseTree, 'warm-base');
  await once(root, 'warm-this');
  const base: number[] = [];
  const mine: number[] = [];
  const cpu: Record<string, number[]> = { base: [], this: [] };
  const passes = new Set<string>();
  const last: Record<string, Row[]> = {};
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['base', 'this'] : ['this', 'base'];
    for (const side of order) {
      const result = await once(side === 'base' ? baseTree : root, `${side}-${r}`);
      (side === 'base' ? base : mine).push(result.seconds);
      cpu[side]?.push(result.cpu);
      last[side] = result.rows;
      passes.add(`${side} ${(result.pass * 100).toFixed(2)}%`);
    }
    console.log(
      `round ${r + 1}: base ${base.at(-1)?.toFixed(2)} s (CPU ${cpu.base?.at(-1)?.toFixed(2)} s), this ${mine.at(-1)?.toFixed(2)} s (CPU ${cpu.this?.at(-1)?.toFixed(2)} s)`,
    );
  }
  const b = median(base);
  const m = median(mine);
  const [bc, mc] = [median(cpu.base ?? []), median(cpu.this ?? [])];
  console.log(
    `${values.suite}: base ${values.base} ${b.toFixed(2)} s, this ${m.toFixed(2)} s: this is ${(b / m).toFixed(2)}x faster; CPU of the whole command ${bc.toFixed(2)} s vs ${mc.toFixed(2)} s (${(bc / mc).toFixed(2)}x less); pass@1 ${[...passes].join(', ')}`,
  );
  const [b0, m0] = [last.base ?? [], last.this ?? []];
  const differ = (f: (r: Row) => unknown) => b0.filter((r, i) => f(r) !== (m0[i] ? f(m0[i]) : undefined));
  console.log(
    `per sample (last round): ${differ((r) => r.passed).length} of ${b0.length} differ in passed, ${differ((r) => r.result).length} in result`,
  );
  for (const r of differ((r) => r.result).slice(0, 3))
    console.log(`  differs: ${JSON.stringify(r).slice(0, 300)}`);
  console.log(
    `load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] as number).toFixed(1)} after (2 cores)`,
  );
} finally {
  await run('git', ['-C', root, 'worktree', 'remove', '--force', baseTree]).catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
}
