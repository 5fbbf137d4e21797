/**
 * Start-up time of the `berth` command (issue 18: at most 0.15 s more than `node -e 0`).
 * Interleaved in one run, each timed as a whole process (spawn to exit):
 *
 * - `node -e 0` (the floor: Node itself),
 * - `node bin/berth.js --version` (the checkout's sources compiled once into the cache,
 *   bin/compile.js; the first start of this run builds it if needed and is not counted),
 * - `node bin/berth.js --version` with `BERTH_NO_BUILD=1` (the sources through tsx, as
 *   before the cache), with `--tsx`.
 *
 * Prints the median of each and the difference to `node -e 0`: wall time, and CPU time (user +
 * system, read from bash's `times`), which a loaded machine inflates far less.
 *
 *   npx tsx bench/startup.ts [--rounds 20] [--tsx]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] ? (args[index + 1] as string) : fallback;
};
const rounds = Number(option('--rounds', '20'));
const bin = fileURLToPath(new URL('../bin/berth.js', import.meta.url));

/** Seconds in bash's `times` format (`0m0.052s`). */
const minutes = (text: string) => {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
};

/** Wall and CPU seconds of one run of `argv` (CPU: the children's user + system time). */
function time(argv: string[], env: Record<string, string> = {}): { wall: number; cpu: number } {
  const started = performance.now();
  // bash's own start is in the wall time of every case alike; `times` prints the children's CPU.
  const run = spawnSync('bash', ['-c', '"$@" >/dev/null || exit $?; times', 'bench', ...argv], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  const wall = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`${argv.join(' ')} exited ${run.status}: ${run.stderr}`);
  const [user, system] = (run.stdout.trim().split('\n')[1] ?? '').split(/\s+/).map(minutes);
  return { wall, cpu: (user ?? Number.NaN) + (system ?? Number.NaN) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const cases: { name: string; argv: string[]; env?: Record<string, string> }[] = [
  { name: 'node -e 0', argv: ['node', '-e', '0'] },
  { name: 'berth --version', argv: ['node', bin, '--version'] },
  ...(args.includes('--tsx')
    ? [{ name: 'berth --version (tsx)', argv: ['node', bin, '--version'], env: { BERTH_NO_BUILD: '1' } }]
    : []),
];
// Build the cache (and warm the page cache) once, uncounted.
for (const c of cases) time(c.argv, c.env);
const times = new Map(cases.map((c) => [c.name, { wall: [] as number[], cpu: [] as number[] }]));
for (let round = 0; round < rounds; round++)
  for (const c of cases) {
    const t = time(c.argv, c.env);
    times.get(c.name)?.wall.push(t.wall);
    times.get(c.name)?.cpu.push(t.cpu);
  }

const of = (name: string, kind: 'wall' | 'cpu') => median(times.get(name)?.[kind] ?? []);
console.log(`${rounds} rounds, interleaved; medians per process (wall / CPU):`);
for (const c of cases) {
  const [wall, cpu] = [of(c.name, 'wall'), of(c.name, 'cpu')];
  const extra =
    c.name === 'node -e 0'
      ? ''
      : `   +${(wall - of('node -e 0', 'wall')).toFixed(3)} s / +${(cpu - of('node -e 0', 'cpu')).toFixed(3)} s over node -e 0`;
  console.log(`  ${c.name.padEnd(24)} ${wall.toFixed(3)} s / ${cpu.toFixed(3)} s${extra}`);
}
const extraWall = of('berth --version', 'wall') - of('node -e 0', 'wall');
console.log(`berth --version - node -e 0: ${extraWall.toFixed(3)} s wall (target <= 0.150)`);
