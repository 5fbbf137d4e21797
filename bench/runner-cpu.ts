/**
 * CPU of one runner JVM of the JVM fast path (src/functional/jvm/fast.ts), apart from the rest of
 * `berth eval`: fresh runner JVMs one after another, each started as the fast path starts it and
 * answering one RUN of the same compiled MBKP sample, then killed. Each measurement is a child
 * process under `perf stat -e task-clock` (bench/child-cpu.ts); a child that starts no JVM
 * (mode `none`) gives node's own share, which is subtracted. Modes, interleaved round by round:
 *
 * - `sandbox`: as berth runs it (cgroup, `bash` closing descriptors, `bwrap`, `setpriv` to a slot
 *   uid when root, the runner's options and class-data archive);
 * - `direct`: `java` with the same options and archive, no sandbox (the JVM's own cost).
 *
 * `--tree DIR` measures another checkout's code (a `git worktree add --detach DIR <commit>` with
 * the node_modules link), e.g. to compare commits within one run:
 *
 *   npx tsx bench/runner-cpu.ts [--runs 20] [--rounds 3] [--sample 0] [--tree DIR]... [--jvm-opt=-X...]
 *
 * Data from BERTH_DATA (default ../shared/data). Needs perf, a JDK and the Kotlin compiler.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runCounted } from './child-cpu.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    sample: { type: 'string', default: '0' },
    tree: { type: 'string', multiple: true, default: [] },
    'jvm-opt': { type: 'string', multiple: true, default: [] },
    // Internal: one measured child.
    child: { type: 'string' },
    classes: { type: 'string' },
  },
});
const here = resolve(import.meta.dirname, '..');

/** The modules of the checkout at `tree` this bench drives. */
async function modules(tree: string) {
  const m = (p: string) => import(join(tree, 'src', p));
  return {
    cds: await m('functional/jvm/cds.ts'),
    helper: await m('functional/jvm/helper.ts'),
    source: await m('functional/jvm/helper-source.ts'),
    program: await m('functional/jvm/program.ts'),
    server: await m('functional/jvm/server.ts'),
    toolchain: await m('functional/jvm/toolchain.ts'),
    identity: await m('sandbox/identity.ts'),
    process: await m('sandbox/process.ts'),
  };
}

if (values.child) {
  // One measured child: `runs` runner JVMs of the checkout `tree[0]`, one after another.
  const mode = values.child;
  const tree = (values.tree as string[])[0] ?? here;
  const classes = values.classes as string;
  const { cds, helper: h, source, server, toolchain, identity: id, process: proc } = await modules(tree);
  const jdk = await toolchain.findJdk();
  const kotlin = await toolchain.findKotlin();
  const helper = await h.ensureHelper();
  const archives = await cds.ensureArchives(jdk, kotlin, helper);
  const { kind } = server.resolveSandbox('auto');
  const root = await mkdtemp(join(tmpdir(), 'berth-bench-runner-'));
  await chmod(root, 0o755);
  const memoryMiB = 512;
  try {
    for (let i = 0; mode !== 'none' && i < Number(values.runs); i++) {
      const identity = id.slotIdentity(i % 8);
      const scratch = join(root, `scratch-${randomBytes(4).toString('hex')}`);
      await mkdir(scratch, { mode: 0o700 });
      if (identity) await chown(scratch, identity.uid, identity.gid);
      const args = [
        '-ea',
        `-Xmx${memoryMiB}m`,
        ...cds.RUNNER_JVM_OPTIONS,
        ...cds.archiveOptions(archives.run),
        ...(values['jvm-opt'] as string[]),
        '-Djava.security.manager=allow',
        `-Djava.io.tmpdir=${scratch}`,
        '-cp',
        cds.runnerClasspath(helper, kotlin),
        source.HELPER_CLASS,
        'run',
        ...cds.runnerPreload(kotlin),
      ];
      const runner = new server.JvmServer({
        launch: () =>
          mode === 'direct'
            ? new proc.SandboxProcess([jdk.java, ...args], { cwd: scratch, env: process.env })
            : server.sandboxedJvm(kind, jdk.java, args, {
                scratch,
                readOnly: [root, classes, helper.dir, kotlin.home],
                limits: server.jvmLimits(memoryMiB),
                ...(identity ? { identity } : {}),
              }),
      });
      await runner.start();
      const answer = await runner.request(['RUN', String(i), classes, 's0', 'MainKt', '65536'], 60);
      if (answer[2] !== '0')
        throw new Error(`the sample failed in its runner: ${answer.join(' ').slice(0, 500)}`);
      runner.kill();
      await runner.exited();
      await rm(scratch, { recursive: true, force: true });
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  process.exit(0);
}

// The parent: compile the sample once (a compiler JVM of this checkout), then measure children.
const data = resolve(here, process.env.BERTH_DATA ?? '../shared/data', 'functional', 'mbxp');
const problems = new Map<string, { prompt: string; test: string }>();
for (const l of readFileSync(join(data, 'mbkp_release_v1.2.jsonl'), 'utf8').split('\n').filter(Boolean)) {
  const p = JSON.parse(l);
  problems.set(p.task_id, p);
}
const sample = JSON.parse(
  readFileSync(join(data, 'mbkp_samples.jsonl'), 'utf8').split('\n')[Number(values.sample)] as string,
);
const problem = problems.get(sample.task_id) as { prompt: string; test: string };
const mine = await modules(here);
const work = await mkdtemp(join(tmpdir(), 'berth-bench-runner-cpu-'));
try {
  await chmod(work, 0o755);
  const source = join(work, 'src', 's0', 'Main.kt');
  const classes = join(work, 'classes');
  await mkdir(join(work, 'src', 's0'), { recursive: true });
  await mkdir(classes);
  await writeFile(
    source,
    mine.program.packageProgram(
      'kotlin',
      mine.program.assembleProgram(problem.prompt, sample.completion, problem.test),
      's0',
    ).source,
  );
  const jdk = await mine.toolchain.findJdk();
  const kotlin = await mine.toolchain.findKotlin();
  const helper = await mine.helper.ensureHelper();
  const compiler = new mine.server.JvmServer({
    launch: () =>
      new mine.process.SandboxProcess(
        [
          jdk.java,
          ...mine.cds.COMPILER_JVM_OPTIONS,
          '-cp',
          helper.jar,
          mine.source.HELPER_CLASS,
          'compile',
          kotlin.home,
        ],
        { cwd: work, env: process.env },
      ),
  });
  const compiled = await compiler.request(['KC', '0', classes, '', source], 300);
  await compiler.stop();
  if (compiled[2] !== '0') throw new Error(`${sample.task_id} does not compile`);

  const trees = (values.tree as string[]).length > 0 ? (values.tree as string[]) : [here];
  const runs = Number(values.runs);
  const measure = (mode: string, tree: string) =>
    runCounted(
      process.execPath,
      [
        ...process.execArgv,
        import.meta.filename,
        '--child',
        mode,
        '--tree',
        tree,
        '--classes',
        classes,
        '--runs',
        String(runs),
        ...(values['jvm-opt'] as string[]).map((o) => `--jvm-opt=${o}`),
      ],
      { env: process.env, maxBuffer: 16 << 20 },
    );
  // One child each first, not counted (a checkout's helper and archives are made at first use).
  for (const tree of trees)
    await runCounted(
      process.execPath,
      [
        ...process.execArgv,
        import.meta.filename,
        '--child',
        'sandbox',
        '--tree',
        tree,
        '--classes',
        classes,
        '--runs',
        '1',
      ],
      { env: process.env },
    );
  const perRunner: Record<string, number[]> = {};
  for (let round = 0; round < Number(values.rounds); round++) {
    const load = loadavg()[0] as number;
    const node = await measure('none', here);
    const line: string[] = [];
    for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) {
      for (const mode of ['sandbox', 'direct']) {
        const ms = (((await measure(mode, tree)) - node) * 1000) / runs;
        const key = `${mode} ${tree}`;
        perRunner[key] = [...(perRunner[key] ?? []), ms];
        line.push(`${key} ${ms.toFixed(0)} ms`);
      }
    }
    console.log(
      `round ${round + 1} (load ${load.toFixed(1)}, node's own ${(node * 1000).toFixed(0)} ms): ${line.join(', ')}`,
    );
  }
  for (const [key, xs] of Object.entries(perRunner))
    console.log(
      `${key}: ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(0)} ms of CPU per runner (mean of ${xs.length})`,
    );
  console.log(
    `sample ${sample.task_id}, ${runs} runners per measurement; load average now ${(loadavg()[0] as number).toFixed(1)} (2 cores)`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
