/**
 * What the tamper checks (src/verifiers/tampering/) cost on the bundled sample: the four
 * instances with the gold patches, one trial at a time, through this checkout's `berth run` and
 * through the commit the checks started from (4826c82, checked out beside it as a git worktree
 * that shares this checkout's node_modules), interleaved over several rounds in one run.
 *
 * Reports the median of the summed trial times (`berth.duration_sec` of each result.json, so
 * process start-up is left out) and of the verifier phases, and the ratio this/base; and the
 * CPU seconds of each whole `berth run`, all its processes (a cpuacct cgroup where there is one,
 * else bench/child-cpu.ts; start-up included, hardly moved by other people's load). Target
 * (issue 10): at most 1.10. Other work landed since the base commit counts in the ratio too.
 *
 *   npx tsx bench/tamper-overhead.ts [--rounds 5] [--base 4826c82]
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runCounted } from './child-cpu.ts';

const run = promisify(execFile);
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] ? (args[index + 1] as string) : fallback;
};
const rounds = Number(option('--rounds', '5'));
const baseCommit = option('--base', '4826c82');
const root = resolve(import.meta.dirname, '..');
const sample = join(root, 'examples', 'swe-dockerless.jsonl');

const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-tamper-'));
const baseTree = join(scratch, 'base');
await run('git', ['-C', root, 'worktree', 'add', '--detach', baseTree, baseCommit]);
symlinkSync(join(root, 'node_modules'), join(baseTree, 'node_modules'));

/** cgroup v1's CPU accounting hierarchy (root only). */
const CPUACCT = '/sys/fs/cgroup/cpuacct';

interface Timing {
  trials: number;
  verifier: number;
  /** CPU seconds (user + system) of the whole `berth run`, its processes and theirs. */
  cpu: number;
}

/** One job of the sample with the oracle, -n 1; summed trial and verifier seconds. */
async function job(tree: string, name: string): Promise<Timing> {
  const jobs = join(scratch, 'jobs');
  const argv = [join(tree, 'bin', 'berth.js'), 'run', '-p', sample, '-a', 'oracle', '-n', '1'];
  argv.push('--jobs-dir', jobs, '--job-name', name);
  const options = { env: { ...process.env, CI: '1' }, maxBuffer: 64 * 1024 * 1024 };
  // CPU: a cgroup v1 cpuacct group of its own counts every process of the run, sandboxed ones
  // killed with their pid namespace too; else perf's count over the whole tree (child-cpu.ts).
  const group = join(CPUACCT, `berth-bench-${process.pid}-${name}`);
  let cpu = 0;
  try {
    mkdirSync(group);
  } catch {
    cpu = await runCounted('node', argv, options);
  }
  if (existsSync(group)) {
    try {
      await run('sh', ['-c', `echo $$ > ${group}/cgroup.procs && exec node "$@"`, 'sh', ...argv], options);
      cpu = Number(readFileSync(join(group, 'cpuacct.usage'), 'utf8')) / 1e9;
    } finally {
      rmdirSync(group);
    }
  }
  let trials = 0;
  let verifier = 0;
  for (const entry of readdirSync(join(jobs, name))) {
    const file = join(jobs, name, entry, 'result.json');
    if (!existsSync(file)) continue;
    const result = JSON.parse(readFileSync(file, 'utf8'));
    if (!result.berth?.resolved) throw new Error(`${tree}: ${entry} is not resolved: ${result.berth?.note}`);
    trials += result.berth.duration_sec;
    if (result.verifier)
      verifier += (Date.parse(result.verifier.finished_at) - Date.parse(result.verifier.started_at)) / 1000;
  }
  return { trials, verifier, cpu };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const loadBefore = loadavg()[0] as number;
try {
  // One warm-up each (tsx compile caches, page cache), not counted.
  await job(baseTree, 'warm-base');
  await job(root, 'warm-this');
  const base: Timing[] = [];
  const mine: Timing[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate the order so neither side always runs second.
    if (r % 2 === 0) {
      base.push(await job(baseTree, `base-${r}`));
      mine.push(await job(root, `this-${r}`));
    } else {
      mine.push(await job(root, `this-${r}`));
      base.push(await job(baseTree, `base-${r}`));
    }
  }
  const b = median(base.map((t) => t.trials));
  const m = median(mine.map((t) => t.trials));
  const bv = median(base.map((t) => t.verifier));
  const mv = median(mine.map((t) => t.verifier));
  const bc = median(base.map((t) => t.cpu));
  const mc = median(mine.map((t) => t.cpu));
  const loadAfter = loadavg()[0] as number;
  console.log(
    `rounds: ${rounds}; base ${baseCommit}; load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after${Math.max(loadBefore, loadAfter) > 1.5 ? ' (LOADED: not a figure to quote)' : ''}`,
  );
  console.log(
    `trial time (4 trials, summed, median): base ${b.toFixed(2)} s, this ${m.toFixed(2)} s, ratio ${(m / b).toFixed(3)} (target <= 1.10)`,
  );
  console.log(
    `verifier phases (summed, median): base ${bv.toFixed(2)} s, this ${mv.toFixed(2)} s, ratio ${(mv / bv).toFixed(3)}`,
  );
  console.log(
    `CPU of the whole berth run (all its processes, median; hardly moved by others' load): base ${bc.toFixed(2)} s, this ${mc.toFixed(2)} s, ratio ${(mc / bc).toFixed(3)}`,
  );
  console.log(
    `all rounds (trial s): base ${base.map((t) => t.trials.toFixed(2)).join(' ')}; this ${mine.map((t) => t.trials.toFixed(2)).join(' ')}`,
  );
} finally {
  await run('git', ['-C', root, 'worktree', 'remove', '--force', baseTree]).catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
}
