/**
 * The cost of the patch layer's shadow check (issue 18, trust19's `python -I` in the bookkeeping
 * script) on a real row whose agent patch creates a module: python-semver-426 (bench/real-rows),
 * its gold patch plus `src/semver/spec.py` as python-semver's fix of #241 (fb58e48) creates it
 * (that commit's own parent does not compile, so it makes no row), run two ways: its plain test
 * command (no `PYTHONPATH`: only the repository's top is on `sys.path`, and the module is
 * deeper) and the same under `PYTHONPATH=src` (the src layout's usual command: the check has to
 * ask python). This checkout against an earlier commit, in one process, interleaved:
 *
 * 1. the check alone: each side's `importableScript` for the patch's created modules, run with
 *    `bash -c` in the prepared repository (gold and test patches applied), wall and CPU
 *    (`perf stat`, every descendant); this checkout's both the first time (nothing remembered)
 *    and with the interpreter the first run found (`KnownPython`, as later trials have it);
 * 2. whole oracle trials through each side's trial engine (local environment, sandboxed, the
 *    SWE-bench verifier), with the wall of the verifier's bookkeeping exec from `BERTH_TRACE`.
 *
 *   npx tsx bench/shadow-check.ts [--base-commit 4e060d5] [--rounds 5] [--mirrors /work/.mirror]
 *
 * Say the load (`uptime`) with the figures: the machine is shared.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { runCounted } from './child-cpu.ts';
import type { RowSpec } from './real-rows/prepare.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    'base-commit': { type: 'string', default: '4e060d5' },
    rounds: { type: 'string', default: '5' },
    mirrors: { type: 'string', default: process.env.BERTH_MIRRORS ?? '/work/.mirror' },
  },
});
const rounds = Number(values.rounds);
const root = resolve(import.meta.dirname, '..');
const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-shadow-'));
const trace = join(scratch, 'trace.log');
process.env.BERTH_TRACE = trace;
process.env.BERTH_CACHE_DIR = join(scratch, 'berth-cache');

// This checkout's trial engine is imported once BERTH_TRACE is set (src/util/trace.ts reads it
// when loaded), as the base's is.
const { OracleAgent } = await import('../src/agents/oracle.ts');
const { runAll } = await import('../src/datasets/demo.ts');
const { loadSwebench } = await import('../src/tasks/swebench/load.ts');
const { commitBase, writeSnapshot } = await import('../src/environments/local/materialise.ts');
const scan = await import('../src/verifiers/tampering/patch-scan.ts');
const { prepareRows } = await import('./real-rows/prepare.ts');

const pytest = 'python3 -m pytest -rA -p no:cacheprovider -o addopts= {tests}';
const row = (id: string, cmd: string): RowSpec => ({
  instance_id: id,
  repo: 'python-semver/python-semver',
  language: 'python',
  fix_commit: '4b03f867a3deaecb07240f471fed9bf9c9072629',
  test_paths: ['tests/'],
  test_files: ['tests/test_subclass.py', 'tests/test_semver.py'],
  test_cmd: cmd,
});
const specs = [
  row('python-semver__python-semver-426', pytest),
  // With $PYTHONPATH kept: a command that drops it drops berth's probe (runner-not-probed).
  row('python-semver__python-semver-426-src', `PYTHONPATH="src:$PYTHONPATH" ${pytest}`),
];

/** A diff creating `path` with `text` (ends with a newline). */
const creating = (path: string, text: string) => {
  const lines = text.split('\n').slice(0, -1);
  return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}\n`).join('')}`;
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const fmt = (xs: number[]) => (xs.some(Number.isNaN) ? 'n/a' : median(xs).toFixed(3));

const base = join(scratch, 'base');
try {
  await mkdir(base);
  execFileSync('sh', [
    '-c',
    'git -C "$1" archive "$2" | tar -x -C "$3"',
    'sh',
    root,
    values['base-commit'] as string,
    base,
  ]);
  await symlink(join(root, 'node_modules'), join(base, 'node_modules'));
  type Demo = typeof import('../src/datasets/demo.ts');
  type Oracle = typeof import('../src/agents/oracle.ts');
  type Load = typeof import('../src/tasks/swebench/load.ts');
  const baseDemo = (await import(join(base, 'src/datasets/demo.ts'))) as Demo;
  const baseOracle = (await import(join(base, 'src/agents/oracle.ts'))) as Oracle;
  const baseLoad = (await import(join(base, 'src/tasks/swebench/load.ts'))) as Load;
  // The base's script: names only (no created-module places, nothing remembered).
  const baseScan = (await import(join(base, 'src/verifiers/tampering/patch-scan.ts'))) as {
    createdModuleNames(patch: string): string[];
    importableScript(names: readonly string[], mark: string, command?: string): string;
  };

  const rowsFile = await prepareRows(specs, values.mirrors as string, join(scratch, 'rows'));
  const tasks = await loadSwebench(rowsFile);
  const baseTasks = await baseLoad.loadSwebench(rowsFile);
  const spec = execFileSync('git', [
    '--git-dir',
    join(values.mirrors as string, 'python-semver+python-semver', 'repo'),
    'show',
    'fb58e48c42a12d2b9520adcce4d8c5fdb110679e:src/semver/spec.py',
  ]).toString();
  for (const task of [...tasks, ...baseTasks])
    if (task.solution.kind === 'patch')
      task.solution.patch = `${task.solution.patch}${creating('src/semver/spec.py', spec)}`;
  console.log(
    `${tasks.length} rows, ${rounds} rounds, base ${values['base-commit']}, load average at the start: ${loadavg()[0]?.toFixed(1)}`,
  );

  // 1. The check alone, in the prepared repository.
  const mark = '@@berth-bench-importable@@';
  for (const task of tasks) {
    const env = task.environment;
    const verifier = task.verifier;
    if (
      env.kind !== 'local' ||
      !env.snapshot ||
      verifier.kind !== 'swebench' ||
      task.solution.kind !== 'patch'
    )
      throw new Error(`${task.name}: not a DockerLess row`);
    const dir = join(scratch, 'raw', task.name);
    await mkdir(dir, { recursive: true });
    await writeSnapshot(dir, env.snapshot);
    await commitBase(dir);
    for (const [name, patch] of [
      ['gold', task.solution.patch],
      ['test', verifier.testPatch],
    ] as const) {
      await writeFile(join(scratch, `${task.name}.${name}.diff`), patch);
      await run('git', ['apply', join(scratch, `${task.name}.${name}.diff`)], { cwd: dir });
    }
    const command = verifier.testCommand.replaceAll('{tests}', verifier.testFiles.join(' '));
    const modules = scan.createdModules(task.solution.patch);
    const learn = await run('bash', ['-c', scan.importableScript(modules, mark, command)], { cwd: dir });
    const known = scan.readImportable(learn.stdout, mark).python;
    const scripts = {
      base: baseScan.importableScript(baseScan.createdModuleNames(task.solution.patch), mark, command),
      first: scan.importableScript(modules, mark, command),
      known: scan.importableScript(modules, mark, command, known),
    };
    const answers = new Set<string>();
    const t = {
      base: { wall: [] as number[], cpu: [] as number[] },
      first: { wall: [] as number[], cpu: [] as number[] },
      known: { wall: [] as number[], cpu: [] as number[] },
    };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 ? (['known', 'first', 'base'] as const) : (['base', 'first', 'known'] as const);
      for (const side of order) {
        const started = performance.now();
        const cpu = await runCounted('bash', ['-c', scripts[side]], { cwd: dir });
        t[side].wall.push((performance.now() - started) / 1000);
        t[side].cpu.push(cpu);
      }
    }
    for (const side of ['base', 'first', 'known'] as const) {
      const out = await run('bash', ['-c', scripts[side]], { cwd: dir });
      answers.add(JSON.stringify([...scan.readImportable(out.stdout, mark).names].sort()));
    }
    console.log(
      `${task.name}: created ${modules.map((m) => `${m.name}${m.top ? ' (top)' : ''}`).join(', ')}; python found ${known ? `${known.found} -> ${known.executable}` : 'none'}; answers ${[...answers].join(' | ')}`,
    );
    for (const side of ['base', 'first', 'known'] as const)
      console.log(
        `  check alone, ${side.padEnd(5)}: wall ${fmt(t[side].wall)} s, CPU ${fmt(t[side].cpu)} s (median of ${rounds})`,
      );
  }

  // 2. Whole trials, interleaved.
  const bookkeeping = async (from: number) => {
    const text = await readFile(trace, 'utf8').catch(() => '');
    const lines = text.slice(from).split('\n');
    const ms = lines
      .filter((l) => l.endsWith(' verifier: bookkeeping exec'))
      .map((l) => Number(l.split(' ')[2]));
    return { seconds: ms.reduce((a, b) => a + b, 0) / 1000, end: text.length };
  };
  const jobs = join(scratch, 'jobs');
  for (let i = 0; i < tasks.length; i++) {
    const t = { head: [] as number[], base: [] as number[], headBk: [] as number[], baseBk: [] as number[] };
    const trial = async (side: 'head' | 'base', round: number) => {
      const from = (await readFile(trace, 'utf8').catch(() => '')).length;
      const started = performance.now();
      const results =
        side === 'head'
          ? await runAll(
              [tasks[i] as (typeof tasks)[number]],
              new OracleAgent(),
              jobs,
              `h-${i}-${round}`,
              1,
              undefined,
            )
          : await baseDemo.runAll(
              [baseTasks[i] as (typeof baseTasks)[number]],
              new baseOracle.OracleAgent(),
              jobs,
              `b-${i}-${round}`,
              1,
              undefined,
            );
      const wall = (performance.now() - started) / 1000;
      if (!results.every((r) => r.berth.resolved)) throw new Error(`${side}: the gold patch did not resolve`);
      if (round === 0) return; // warm-up: the install cache, page cache, bytecode
      t[side].push(wall);
      t[side === 'head' ? 'headBk' : 'baseBk'].push((await bookkeeping(from)).seconds);
    };
    await trial('head', 0);
    await trial('base', 0);
    for (let round = 1; round <= rounds; round++) {
      if (round % 2) {
        await trial('base', round);
        await trial('head', round);
      } else {
        await trial('head', round);
        await trial('base', round);
      }
    }
    console.log(
      `${tasks[i]?.name} trials: base ${fmt(t.base)} s (bookkeeping exec ${fmt(t.baseBk)} s), this ${fmt(t.head)} s (bookkeeping exec ${fmt(t.headBk)} s), ratio this/base ${(median(t.head) / median(t.base)).toFixed(3)}`,
    );
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await rm(scratch, { recursive: true, force: true });
}
