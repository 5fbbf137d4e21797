/**
 * Speed of the fast JVM path against the reference path (mxeval's commands), in one run.
 *
 *   npx tsx bench/functional-jvm.ts [--subset N] [--limit N] [--workers N]
 *   npx tsx bench/functional-jvm.ts --reference-all --out FILE   (one-off: every sample through
 *       --reference, verdicts appended to FILE as JSONL, resumable; then compared with the fast path)
 *
 * Input: MBKP problems and mxeval's example samples from `$BERTH_DATA/functional/mbxp/`
 * (default `../shared/data`). Prints seconds per sample for each path, the ratio, pass@1 and
 * every verdict on which the two paths disagree.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runFast } from '../src/functional/jvm/fast.ts';
import type { JvmSample, JvmVerdict } from '../src/functional/jvm/jvm-types.ts';
import { runReference } from '../src/functional/jvm/reference.ts';
import { type MbxpProblem, mbkpFiles, readJsonl, toJvmSamples } from '../test/helpers/mbxp-jsonl.ts';

const { values } = parseArgs({
  options: {
    subset: { type: 'string', default: '20' },
    limit: { type: 'string' },
    workers: { type: 'string' },
    'batch-size': { type: 'string' },
    'reference-all': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

const files = mbkpFiles();
if (!existsSync(files.problems)) {
  console.error(`MBKP data not found (${files.problems}); set BERTH_DATA.`);
  process.exit(2);
}
let samples: JvmSample[] = toJvmSamples(
  readJsonl<MbxpProblem>(files.problems),
  readJsonl<{ task_id: string; completion: string }>(files.samples),
  'kotlin',
);
if (values.limit) samples = samples.slice(0, Number(values.limit));
const workers = values.workers ? Number(values.workers) : undefined;
const batchSize = values['batch-size'] ? Number(values['batch-size']) : undefined;

/**
 * CPU seconds used by this process's finished children (the JVMs, kotlinc, bwrap), from
 * /proc/self/stat (cutime + cstime); the machine may be shared, so CPU time is reported beside
 * wall time. Returns NaN where /proc is absent.
 */
function childCpuSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is index 0, so cutime (16th overall) is index 13, cstime 14.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

function passRate(vs: JvmVerdict[]): string {
  return `${((100 * vs.filter((v) => v.status === 'passed').length) / vs.length).toFixed(2)}%`;
}

const pass = (v: JvmVerdict) => v.status === 'passed';

if (values['reference-all']) {
  if (!values.out) throw new Error('--reference-all needs --out FILE');
  const out = values.out;
  const done = new Map<string, JvmVerdict>();
  if (existsSync(out)) for (const v of readJsonl<JvmVerdict>(out)) done.set(v.key, v);
  const todo = samples.filter((s) => !done.has(s.key));
  console.log(`reference: ${done.size} already done, ${todo.length} to go`);
  const t0 = performance.now();
  await runReference(todo, {
    workers,
    onVerdict: (v) => {
      appendFileSync(out, `${JSON.stringify(v)}\n`);
      done.set(v.key, v);
    },
  });
  console.log(`reference: ${todo.length} samples in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  process.exit(0);
}

// Subset for the reference path: evenly spread over the file.
const n = Math.min(Number(values.subset), samples.length);
const step = samples.length / n;
const subset = Array.from({ length: n }, (_, i) => samples[Math.floor(i * step)]!);

const c0 = childCpuSeconds();
const t0 = performance.now();
const fast = await runFast(samples, { workers, batchSize });
const fastSeconds = (performance.now() - t0) / 1000;
const fastCpu = childCpuSeconds() - c0;

const c1 = childCpuSeconds();
const t1 = performance.now();
const ref = await runReference(subset, { workers });
const refSeconds = (performance.now() - t1) / 1000;
const refCpu = childCpuSeconds() - c1;

const fastPer = fastSeconds / samples.length;
const refPer = refSeconds / subset.length;
const byKey = new Map(fast.map((v) => [v.key, v]));
const disagreements = ref.filter((r) => pass(r) !== pass(byKey.get(r.key)!));

console.log(
  `fast path:      ${samples.length} samples in ${fastSeconds.toFixed(1)} s = ${fastPer.toFixed(3)} s/sample, pass@1 ${passRate(fast)}`,
);
console.log(
  `reference path: ${subset.length} samples in ${refSeconds.toFixed(1)} s = ${refPer.toFixed(3)} s/sample, pass@1 ${passRate(ref)} (subset)`,
);
console.log(
  `CPU: fast path ${(fastCpu / samples.length).toFixed(3)} CPU-s/sample, reference ${(refCpu / subset.length).toFixed(3)} CPU-s/sample (${(refCpu / subset.length / (fastCpu / samples.length)).toFixed(1)}x)`,
);
console.log(
  `ratio: fast path is ${(refPer / fastPer).toFixed(1)}x faster per sample in wall time (target >= 20x; all 966 in < 300 s)`,
);
console.log(
  `load average at the end: ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${(await import('node:os')).cpus().length} CPUs`,
);
console.log(`verdicts differing on the subset: ${disagreements.length}`);
for (const r of disagreements) {
  const f = byKey.get(r.key)!;
  console.log(
    `  ${r.key}: reference ${r.status}, fast ${f.status}: ${(f.message || r.message).slice(0, 200)}`,
  );
}

// When a full reference run was recorded (--reference-all --out FILE), compare all of it.
if (values.out && existsSync(values.out)) {
  const all = readJsonl<JvmVerdict>(values.out);
  const diff = all.filter((r) => byKey.has(r.key) && pass(r) !== pass(byKey.get(r.key)!));
  const otherStatus = all.filter((r) => byKey.has(r.key) && r.status !== byKey.get(r.key)!.status);
  console.log(`recorded reference verdicts: ${all.length}; differing from the fast path: ${diff.length}`);
  console.log(
    `  of which a different status (passed / failed / compile_error / timed_out): ${otherStatus.length}`,
  );
  for (const r of otherStatus)
    console.log(`  ${r.key}: reference ${r.status}, fast ${byKey.get(r.key)!.status}`);
}
