/**
 * Trials at the speed of their tests (issue 18): SWE-style rows built with `berth dataset build`
 * from real fix commits (bench/real-rows/rows.json: python-semver, tomli, node-semver with an
 * install step, Masterminds/semver, BurntSushi/toml), each run two ways in the same process,
 * interleaved round by round:
 *
 * - raw: the row's test command (`{tests}` filled in) with `bash -c` in a folder prepared once
 *   (snapshot written, install run, gold and test patches applied), no sandbox;
 * - berth: one oracle trial of the row through berth's trial engine (`runJob`, local environment,
 *   sandboxed, limits on, the install step, the SWE-bench verifier), timed from call to return.
 *
 * Prints per row the raw median, the first trial of the row (which pays what is cached once per
 * snapshot, such as the install) and the median of the later trials, the ratio later/raw, and the
 * geometric mean of the ratios per language and overall.
 *
 *   npx tsx bench/real-rows.ts --mirrors /work/.mirror [--rounds 5] [--only tomli[,toml-418]] [--scratch DIR] [--copy]
 *
 * `--copy` adds, in every round, a later trial whose repository is copied from the install cache
 * (`BERTH_INSTALL_OVERLAY=0`) beside the one that gets it copy-on-write (an overlay, where berth
 * can mount one), and prints the two medians and their ratio: overlay against copy in one run.
 * `--against VAR=VALUE` does the same with that variable set in the extra trial instead (e.g.
 * `--against BERTH_GO_VERIFY_CACHE=0`: Go rows with and without the verifier's build cache).
 *
 * berth's caches live in `<scratch>/berth-cache` (BERTH_CACHE_DIR), emptied at the start, so the
 * first trial of each row pays its install. `BERTH_INSTALL_CACHE=0` measures without the cache.
 *
 * `--mirrors` holds the projects' git mirrors (as the fetch tool brings them: `owner+name/repo`,
 * or `owner__name`); the rows are built once into the scratch folder (default
 * node_modules/.cache/berth-bench-rows, never committed) and rebuilt when rows.json changes.
 * Ratios in one run are the figure to quote; say when the machine was loaded. The Python rows run
 * Debian's `python3` with `python3-pytest` and `python3-dateutil` (tomli's tests import it; without
 * it `berth dataset build` refuses both tomli rows: "gold leaves 2 failing"): .ci/install-packages.sh.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { OracleAgent } from '../src/agents/oracle.ts';
import { runAll } from '../src/datasets/demo.ts';
import { commitBase, writeSnapshot } from '../src/environments/local/materialise.ts';
import { loadSwebench } from '../src/tasks/swebench/load.ts';
import type { Task } from '../src/tasks/task.ts';
import { shellQuote } from '../src/util/shell.ts';
import { prepareRows, readSpecs } from './real-rows/prepare.ts';

const run = promisify(execFile);

const { values } = parseArgs({
  options: {
    mirrors: { type: 'string', default: process.env.BERTH_MIRRORS ?? '/work/.mirror' },
    scratch: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string' },
    fresh: { type: 'boolean', default: false },
    copy: { type: 'boolean', default: false },
    against: { type: 'string' },
  },
});
const root = resolve(import.meta.dirname, '..');
const scratch = resolve(values.scratch ?? join(root, 'node_modules', '.cache', 'berth-bench-rows'));
const rounds = Number(values.rounds);
// berth's caches for this run only, empty at the start: the first trial of each row pays the install.
process.env.BERTH_CACHE_DIR = join(scratch, 'berth-cache');
await rm(process.env.BERTH_CACHE_DIR, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const geomean = (xs: number[]) => Math.exp(xs.reduce((sum, x) => sum + Math.log(x), 0) / xs.length);

const specs = await readSpecs();
await mkdir(scratch, { recursive: true });
const rowsFile = await prepareRows(specs, values.mirrors as string, join(scratch, 'rows'), values.fresh);
// `--only a,b`: the rows whose id holds any of the comma-separated parts.
const only = values.only?.split(',').filter((part) => part !== '') ?? [];
const tasks = (await loadSwebench(rowsFile)).filter(
  (t) => only.length === 0 || only.some((part) => t.name.includes(part)),
);
if (tasks.length === 0) throw new Error(`no row of bench/real-rows/rows.json matches ${values.only}`);

interface Row {
  task: Task;
  language: string;
  /** The prepared folder of the raw runs. */
  dir: string;
  command: string;
  raw: number[];
  trials: number[];
  resolved: boolean[];
  /** `--copy`: later trials with the repository copied from the install cache. */
  copies: number[];
  /** How each trial's repository was made from the install cache (`berth.install_cache.method`). */
  methods: string[];
}

async function sh(command: string, cwd: string): Promise<number> {
  const started = performance.now();
  await run('bash', ['-c', command], { cwd, maxBuffer: 1 << 28 }).catch((error: { code?: number }) => {
    // A failing test run is still a run (the raw command need not exit 0 before the fix).
    if (typeof error.code !== 'number') throw error;
  });
  return (performance.now() - started) / 1000;
}

/** The raw folder: snapshot, base commit, install, gold patch and test patch applied. */
async function prepareRaw(task: Task, dir: string): Promise<string> {
  const env = task.environment;
  const verifier = task.verifier;
  if (env.kind !== 'local' || !env.snapshot || verifier.kind !== 'swebench' || task.solution.kind !== 'patch')
    throw new Error(`${task.name}: not a DockerLess row with a snapshot`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeSnapshot(dir, env.snapshot);
  await commitBase(dir);
  if (env.install) await run('bash', ['-c', env.install], { cwd: dir, maxBuffer: 1 << 28 });
  for (const [name, patch] of [
    ['gold.diff', task.solution.patch],
    ['test.diff', verifier.testPatch],
  ] as const) {
    await writeFile(join(dir, '..', `${task.name}.${name}`), patch);
    await run('git', ['apply', join(dir, '..', `${task.name}.${name}`)], { cwd: dir });
  }
  return verifier.testCommand.replaceAll('{tests}', verifier.testFiles.map(shellQuote).join(' '));
}

const rows: Row[] = [];
for (const task of tasks) {
  const spec = specs.find((s) => s.instance_id === task.name);
  const dir = join(scratch, 'raw', task.name, 'repo');
  const command = await prepareRaw(task, dir);
  await sh(command, dir); // warm up: page cache, bytecode, the raw folder's own build caches
  rows.push({
    task,
    language: spec?.language ?? '?',
    dir,
    command,
    raw: [],
    trials: [],
    resolved: [],
    copies: [],
    methods: [],
  });
}

const jobs = join(scratch, 'jobs');
await rm(jobs, { recursive: true, force: true });
const [againstVar, againstValue] = values.against
  ? [values.against.split('=')[0] as string, values.against.split('=').slice(1).join('=')]
  : ['BERTH_INSTALL_OVERLAY', '0'];
if (values.against) values.copy = true;
const trial = async (row: Row, round: number, copy = false) => {
  if (copy) process.env[againstVar] = againstValue;
  const started = performance.now();
  try {
    const [result] = await runAll(
      [row.task],
      new OracleAgent(),
      jobs,
      `${row.task.name}-${round}${copy ? '-copy' : ''}`,
      1,
      undefined,
    );
    (copy ? row.copies : row.trials).push((performance.now() - started) / 1000);
    row.resolved.push(result?.berth.resolved === true);
    row.methods.push(result?.berth.install_cache?.method ?? '-');
  } finally {
    delete process.env[againstVar];
  }
};

console.log(`${rows.length} rows, ${rounds} rounds, load average at the start: ${loadavg()[0]?.toFixed(1)}`);
for (let round = 0; round < rounds; round++) {
  for (const row of rows) {
    // Alternate which goes first, so a trend in the machine's load hits both alike.
    if (round % 2) {
      row.raw.push(await sh(row.command, row.dir));
      if (values.copy) await trial(row, round, true);
      await trial(row, round);
    } else {
      await trial(row, round);
      row.raw.push(await sh(row.command, row.dir));
      if (values.copy) await trial(row, round, true);
    }
  }
  console.log(`round ${round + 1}/${rounds} done`);
}

const table: string[][] = [
  [
    'row',
    'lang',
    'raw s',
    'first s',
    'later s',
    'later/raw',
    ...(values.copy
      ? values.against
        ? ['against s', 'against/raw', 'later/against']
        : ['copy s', 'copy/raw', 'later/copy']
      : []),
    'resolved',
    'methods',
  ],
];
const ratios = new Map<string, number[]>();
for (const row of rows) {
  const raw = median(row.raw);
  const later = median(row.trials.slice(1));
  const ratio = later / raw;
  ratios.set(row.language, [...(ratios.get(row.language) ?? []), ratio]);
  table.push([
    row.task.name,
    row.language,
    raw.toFixed(2),
    (row.trials[0] as number).toFixed(2),
    later.toFixed(2),
    ratio.toFixed(2),
    ...(values.copy
      ? [
          median(row.copies).toFixed(2),
          (median(row.copies) / raw).toFixed(2),
          (later / median(row.copies)).toFixed(2),
        ]
      : []),
    `${row.resolved.filter(Boolean).length}/${row.resolved.length}`,
    // How each trial's repository was made: o(verlay), c(opy), - (no cache hit: the first).
    row.methods.map((m) => (m === '-' ? '-' : (m[0] ?? '?'))).join(''),
  ]);
}
const widths = (table[0] as string[]).map((_, i) => Math.max(...table.map((r) => (r[i] as string).length)));
for (const line of table) console.log(line.map((cell, i) => cell.padEnd(widths[i] as number)).join('  '));
console.log('');
for (const [language, xs] of ratios)
  console.log(
    `${language}: geometric mean later/raw ${geomean(xs).toFixed(2)}, worst ${Math.max(...xs).toFixed(2)}`,
  );
const all = [...ratios.values()].flat();
console.log(`all: geometric mean later/raw ${geomean(all).toFixed(2)}, worst ${Math.max(...all).toFixed(2)}`);
console.log(`load average at the end: ${loadavg()[0]?.toFixed(1)}`);
await writeFile(
  join(scratch, 'last-run.json'),
  JSON.stringify(
    rows.map((r) => ({
      id: r.task.name,
      raw: r.raw,
      trials: r.trials,
      copies: r.copies,
      resolved: r.resolved,
      methods: r.methods,
    })),
    null,
    2,
  ),
);
