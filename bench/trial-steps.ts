/**
 * Where a later trial's fixed seconds go (issue 18), for one real row of bench/real-rows/rows.json:
 * its first trial (which fills the install cache) unless `--keep-cache`, then `--trials` later
 * trials, one at a time, each traced (`BERTH_TRACE`, src/util/trace.ts). Prints per trial its wall
 * time, the CPU seconds of every process of the trial (a cgroup v1 `cpuacct` group of this process,
 * as root; sandboxed processes included) and of berth's own process (threads included), then per
 * traced step the median wall time over the later trials. CPU seconds hardly move with other
 * people's load where wall seconds do: on a shared machine, compare those.
 *
 *   npx tsx bench/trial-steps.ts --only python-semver__python-semver-426 [--trials 4] [--keep-cache]
 *     [--mirrors /work/.mirror] [--scratch DIR]
 *
 * The rows are built as bench/real-rows.ts builds them, into this bench's own scratch folder
 * (default node_modules/.cache/berth-bench-steps; `--scratch` may point at real-rows' to reuse
 * its rows), whose `berth-cache` it empties first unless `--keep-cache`.
 */
import { appendFileSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareRows, readSpecs } from './real-rows/prepare.ts';

const { values } = parseArgs({
  options: {
    mirrors: { type: 'string', default: process.env.BERTH_MIRRORS ?? '/work/.mirror' },
    scratch: { type: 'string' },
    only: { type: 'string' },
    trials: { type: 'string', default: '4' },
    'keep-cache': { type: 'boolean', default: false },
  },
});
if (!values.only) throw new Error('--only ROW: one instance id of bench/real-rows/rows.json');
const root = resolve(import.meta.dirname, '..');
const scratch = resolve(values.scratch ?? join(root, 'node_modules', '.cache', 'berth-bench-steps'));
await mkdir(scratch, { recursive: true });
const traceFile = join(scratch, 'trace.txt');
await rm(traceFile, { force: true });
// Before berth's modules load: the trace facility reads it once.
process.env.BERTH_TRACE = traceFile;
process.env.BERTH_CACHE_DIR = join(scratch, 'berth-cache');
if (!values['keep-cache']) await rm(process.env.BERTH_CACHE_DIR, { recursive: true, force: true });

const { OracleAgent } = await import('../src/agents/oracle.ts');
const { runAll } = await import('../src/datasets/demo.ts');
const { loadSwebench } = await import('../src/tasks/swebench/load.ts');

const rowsFile = await prepareRows(await readSpecs(), values.mirrors as string, join(scratch, 'rows'));
const task = (await loadSwebench(rowsFile)).find((t) => t.name === values.only);
if (!task) throw new Error(`no row ${values.only} in bench/real-rows/rows.json`);

/** CPU seconds of this process and every process it started (cgroup v1 cpuacct, as root), else NaN. */
const group = join('/sys/fs/cgroup/cpuacct', `berth-bench-steps-${process.pid}`);
let counted = false;
try {
  mkdirSync(group);
  writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
  counted = true;
} catch {}
const treeCpu = () =>
  counted ? Number(readFileSync(join(group, 'cpuacct.usage'), 'utf8')) / 1e9 : Number.NaN;
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const jobs = join(scratch, 'jobs');
await rm(jobs, { recursive: true, force: true });
const total = Number(values.trials) + (values['keep-cache'] ? 0 : 1);
console.log(`${task.name}: ${total} trials, load average at the start ${loadavg()[0]?.toFixed(1)}`);
console.log('trial  wall s  cpu s (all processes)  cpu s (berth)  resolved  cache');
const later: { trial: number; wall: number }[] = [];
for (let i = 0; i < total; i++) {
  appendFileSync(traceFile, `=== trial ${i}\n`);
  const [t0, c0, o0] = [performance.now(), treeCpu(), ownCpu()];
  const [result] = await runAll([task], new OracleAgent(), jobs, `${task.name}-${i}`, 1, undefined);
  const wall = (performance.now() - t0) / 1000;
  appendFileSync(
    traceFile,
    `berth-trace ${t0.toFixed(1)} ${(wall * 1000).toFixed(1)} bench: the trial's job\n`,
  );
  const method = result?.berth.install_cache?.method ?? '-';
  if (method !== '-') later.push({ trial: i, wall });
  console.log(
    `${String(i).padEnd(5)}  ${wall.toFixed(3).padStart(6)}  ${(treeCpu() - c0).toFixed(3).padStart(21)}  ${(ownCpu() - o0).toFixed(3).padStart(13)}  ${String(result?.berth.resolved).padEnd(8)}  ${method}`,
  );
}
if (counted) {
  // Empty once this process leaves it: back to the parent group first.
  writeFileSync('/sys/fs/cgroup/cpuacct/cgroup.procs', String(process.pid));
  rmdirSync(group);
}

// Per step, the median over the later trials (a command's label without its varying parts).
const byStep = new Map<string, number[]>();
let trial = -1;
for (const line of (await readFile(traceFile, 'utf8')).split('\n')) {
  if (line.startsWith('=== trial ')) trial = Number(line.slice(10));
  const m = /^berth-trace \S+ (\S+) (.*)$/.exec(line);
  if (!m || !later.some((l) => l.trial === trial)) continue;
  const label = (m[2] as string).replace(/[0-9a-f]{8,}/g, '…').replace(/p\d+-/g, 'p…-');
  byStep.set(label, [...(byStep.get(label) ?? []), Number(m[1])]);
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? (s[h] as number) : ((s[h - 1] as number) + (s[h] as number)) / 2;
};
console.log(
  `\nlater trials (${later.length}), median wall per traced step (steps nest: see src/util/trace.ts):`,
);
for (const [label, ms] of [...byStep].sort((a, b) => median(b[1]) - median(a[1])))
  console.log(
    `${median(ms).toFixed(1).padStart(9)} ms  ${label}${ms.length !== later.length ? ` (x${ms.length})` : ''}`,
  );
console.log(`load average at the end: ${loadavg()[0]?.toFixed(1)}; trace: ${traceFile}`);
