/**
 * The bundled sample through berth's trial engine with the oracle (as bench/local-trials.ts),
 * this checkout against an earlier commit of berth, in one process, interleaved round by round:
 * what a change costs per trial (issue 10: the sandbox's limits may cost at most 10%).
 *
 *   npx tsx bench/local-trials-vs-base.ts [--base-commit 4826c82] [--rounds 5] [-n 1]
 *
 * The base is extracted with `git archive` into a temporary folder (its node_modules linked to
 * this checkout's) and its `runAll` imported beside this one's. Prints each round's seconds and
 * the median ratio this/base. Run it on a quiet machine and say when it was not.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OracleAgent } from '../src/agents/oracle.ts';
import { runAll, SAMPLE } from '../src/datasets/demo.ts';
import { loadSwebench } from '../src/tasks/swebench/load.ts';

const { values } = parseArgs({
  options: {
    'base-commit': { type: 'string', default: '4826c82' },
    rounds: { type: 'string', default: '5' },
    n: { type: 'string', short: 'n', default: '1' },
  },
});
const rounds = Number(values.rounds);
const concurrency = Number(values.n);
const root = resolve(import.meta.dirname, '..');
const base = await mkdtemp(join(tmpdir(), 'berth-bench-base-'));
const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-vs-base-'));

type RunAll = typeof runAll;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

try {
  execFileSync('sh', [
    '-c',
    `git -C "$1" archive "$2" | tar -x -C "$3"`,
    'sh',
    root,
    values['base-commit'] as string,
    base,
  ]);
  await symlink(join(root, 'node_modules'), join(base, 'node_modules'));
  const baseDemo = (await import(join(base, 'src/datasets/demo.ts'))) as { runAll: RunAll };
  const baseAgents = (await import(join(base, 'src/agents/oracle.ts'))) as {
    OracleAgent: typeof OracleAgent;
  };
  const baseLoad = (await import(join(base, 'src/tasks/swebench/load.ts'))) as {
    loadSwebench: typeof loadSwebench;
  };
  const tasks = await loadSwebench(SAMPLE);
  const baseTasks = await baseLoad.loadSwebench(SAMPLE);

  const time = async (label: string, go: () => Promise<{ berth: { resolved: boolean } }[]>) => {
    const started = performance.now();
    const results = await go();
    if (results.some((r) => !r.berth.resolved)) throw new Error(`${label}: the gold patch did not resolve`);
    return (performance.now() - started) / 1000;
  };
  const head = (round: number) =>
    time('this', () => runAll(tasks, new OracleAgent(), scratch, `head-${round}`, concurrency, undefined));
  const old = (round: number) =>
    time('base', () =>
      baseDemo.runAll(
        baseTasks,
        new baseAgents.OracleAgent(),
        scratch,
        `base-${round}`,
        concurrency,
        undefined,
      ),
    );
  await head(0); // warm up both (page cache, probes, interpreters)
  await old(0);
  const t = { head: [] as number[], base: [] as number[] };
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so a trend in the machine's load hits both alike.
    if (round % 2) {
      t.base.push(await old(round));
      t.head.push(await head(round));
    } else {
      t.head.push(await head(round));
      t.base.push(await old(round));
    }
    console.log(`round ${round}: base ${t.base.at(-1)?.toFixed(2)}s  this ${t.head.at(-1)?.toFixed(2)}s`);
  }
  const ratio = median(t.head) / median(t.base);
  console.log(
    `\n${tasks.length} instances, -n ${concurrency}, ${rounds} rounds, medians: base ${median(t.base).toFixed(2)}s, this ${median(t.head).toFixed(2)}s`,
  );
  console.log(`ratio this/base: ${ratio.toFixed(3)} (load average at the end: ${loadavg()[0]?.toFixed(1)})`);
} finally {
  await rm(scratch, { recursive: true, force: true });
  await rm(base, { recursive: true, force: true });
}
