/**
 * What starting a trial from the install cache costs, overlay against copy (issue 18): for one
 * row of bench/real-rows/rows.json, a local environment started from the row's install-cache
 * entry and stopped, `--rounds` times each way, interleaved (the order alternates per round):
 *
 * - overlay: the repository copy-on-write on the entry (src/environments/local/overlay.ts);
 * - copy: the entry copied into the trial's tmpfs (`BERTH_INSTALL_OVERLAY=0`).
 *
 * Prints the medians of start (to a ready repository), of a `git status` in it (what a first
 * look at the tree costs there) and of stop (unmount, free the tmpfs), and their ratio.
 *
 *   npx tsx bench/install-restore.ts --mirrors /work/.mirror --only npm__node-semver-870 [--rounds 10]
 *
 * The rows and berth's cache are those of bench/real-rows.ts (`--scratch`, default
 * node_modules/.cache/berth-bench-rows); the entry is made once (the install runs) when absent.
 * Needs root for the overlay (else both columns are copies: see the `method` line).
 */
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalEnvironmentProvider } from '../src/environments/local/local.ts';
import { loadSwebench } from '../src/tasks/swebench/load.ts';
import { prepareRows, readSpecs } from './real-rows/prepare.ts';

const { values } = parseArgs({
  options: {
    mirrors: { type: 'string', default: process.env.BERTH_MIRRORS ?? '/work/.mirror' },
    scratch: { type: 'string' },
    rounds: { type: 'string', default: '10' },
    only: { type: 'string', default: 'npm__node-semver-870' },
  },
});
const root = resolve(import.meta.dirname, '..');
const scratch = resolve(values.scratch ?? join(root, 'node_modules', '.cache', 'berth-bench-rows'));
process.env.BERTH_CACHE_DIR = join(scratch, 'berth-cache');
const rowsFile = await prepareRows(await readSpecs(), values.mirrors as string, join(scratch, 'rows'), false);
const task = (await loadSwebench(rowsFile)).find((t) => t.name === values.only);
if (!task) throw new Error(`no row ${values.only} in bench/real-rows/rows.json`);

const provider = new LocalEnvironmentProvider();
const context = { task, jobId: 'install-restore', trialDir: tmpdir() };
// The entry, once: a first environment runs the install and saves it (as the engine does).
{
  const env = await provider.start(context);
  if (!env.installCache?.hit && task.environment.kind === 'local' && task.environment.install) {
    const run = await env.exec(task.environment.install, { setup: true, network: { mode: 'public' } });
    if (run.exitCode !== 0) throw new Error(`install failed: ${run.output.slice(-500)}`);
    await env.installCache?.save();
  }
  await env.stop();
}

type Way = 'overlay' | 'copy';
const times: Record<Way, { start: number[]; status: number[]; stop: number[]; methods: Set<string> }> = {
  overlay: { start: [], status: [], stop: [], methods: new Set() },
  copy: { start: [], status: [], stop: [], methods: new Set() },
};
const seconds = (since: number) => (performance.now() - since) / 1000;
async function once(way: Way): Promise<void> {
  if (way === 'copy') process.env.BERTH_INSTALL_OVERLAY = '0';
  try {
    let t = performance.now();
    const env = await provider.start(context);
    times[way].start.push(seconds(t));
    times[way].methods.add(env.installCache?.method ?? 'none');
    t = performance.now();
    const status = await env.exec('git status --porcelain >/dev/null');
    times[way].status.push(seconds(t));
    if (status.exitCode !== 0) throw new Error(`git status failed: ${status.output}`);
    t = performance.now();
    await env.stop();
    times[way].stop.push(seconds(t));
  } finally {
    delete process.env.BERTH_INSTALL_OVERLAY;
  }
}

const rounds = Number(values.rounds);
console.log(`${task.name}, ${rounds} rounds, load average at the start: ${loadavg()[0]?.toFixed(1)}`);
for (let round = 0; round < rounds; round++) {
  const order: Way[] = round % 2 ? ['copy', 'overlay'] : ['overlay', 'copy'];
  for (const way of order) await once(way);
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
for (const part of ['start', 'status', 'stop'] as const) {
  const o = median(times.overlay[part]);
  const c = median(times.copy[part]);
  console.log(
    `${part.padEnd(6)}  overlay ${o.toFixed(3)} s  copy ${c.toFixed(3)} s  overlay/copy ${(o / c).toFixed(2)}`,
  );
}
const total = (way: Way) =>
  times[way].start.map((s, i) => s + (times[way].status[i] ?? 0) + (times[way].stop[i] ?? 0));
console.log(
  `total   overlay ${median(total('overlay')).toFixed(3)} s  copy ${median(total('copy')).toFixed(3)} s  overlay/copy ${(median(total('overlay')) / median(total('copy'))).toFixed(2)}`,
);
console.log(
  `method  overlay: ${[...times.overlay.methods].join(',')}  copy: ${[...times.copy.methods].join(',')}`,
);
console.log(`load average at the end: ${loadavg()[0]?.toFixed(1)}`);
