import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandAgent } from '../../src/agents/command.ts';
import { OracleAgent } from '../../src/agents/oracle.ts';
import { installCacheKey, installsDir } from '../../src/environments/local/install-cache.ts';
import {
  type LocalEnvironment,
  LocalEnvironmentProvider,
  TRIAL_ALIAS,
} from '../../src/environments/local/local.ts';
import { cappedFolderSupport } from '../../src/sandbox/capped-folder.ts';
import { isRoot } from '../../src/sandbox/identity.ts';
import { probeIsolation } from '../../src/sandbox/isolation.ts';
import type { Task } from '../../src/tasks/task.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { reclaimLeftovers } from '../../src/util/leftovers.ts';
import { SwebenchVerifier } from '../../src/verifiers/swebench.ts';
import { statusLinesParser } from '../helpers/status-lines-parser.ts';
import { swebenchTask } from '../helpers/swebench-task.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
let cacheDir = '';
const saved = process.env.BERTH_CACHE_DIR;
const started: LocalEnvironment[] = [];
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'berth-speed-install-cache-'));
  process.env.BERTH_CACHE_DIR = cacheDir;
});
afterAll(async () => {
  for (const env of started) await env.stop();
  if (saved === undefined) delete process.env.BERTH_CACHE_DIR;
  else process.env.BERTH_CACHE_DIR = saved;
  await rm(cacheDir, { recursive: true, force: true });
});

const FIX =
  'diff --git a/fix.txt b/fix.txt\nnew file mode 100644\n--- /dev/null\n+++ b/fix.txt\n@@ -0,0 +1 @@\n+fixed\n';

const task = (environment: Task['environment'], testCommand = 'true', passToPass: string[] = []) =>
  swebenchTask(environment, {
    name: 'install-cache',
    testCommand,
    passToPass,
    solution: { kind: 'patch', patch: FIX },
  });

// The read-only node_modules layer is asked for (docs/speed.md); this file tests it too.
process.env.BERTH_READONLY_NODE_MODULES = '1';
const provider = new LocalEnvironmentProvider();
/** Whether trials here get `node_modules` as a read-only layer (root, capped trial folders). */
const layered = async () => isRoot && (await cappedFolderSupport()) === undefined;
async function start(environment: Task['environment']): Promise<LocalEnvironment> {
  const env = await provider.start({ task: task(environment), jobId: 'install-cache', trialDir: tmpdir() });
  started.push(env);
  return env;
}

/** Runs the install as the engine does (berth's rights, then the entry is saved). */
async function install(env: LocalEnvironment, command: string): Promise<void> {
  const run = await env.exec(command, { setup: true, network: { mode: 'public' } });
  expect(run.exitCode).toBe(0);
  await env.installCache?.save();
}

describe('install once, materialise once (local environment)', () => {
  it.each([
    ['copied (git would diff it)', false],
    ['ignored by git (a read-only layer as root)', true],
  ])(
    'a trial that writes into the cached install cannot change the next trial: node_modules %s',
    async (_, ignored) => {
      const nonce = randomUUID();
      const spec: Task['environment'] = {
        kind: 'local',
        snapshot: {
          files: {
            'a.txt': 'orig\n',
            'src/m.py': 'X = 1\n',
            ...(ignored ? { '.gitignore': 'node_modules/\n' } : {}),
          },
          symlinks: { 'link.txt': 'a.txt' },
          binaryFiles: { 'b.bin': Buffer.from([0, 1, 255]).toString('base64') },
          executables: ['src/m.py'],
        },
        install: `mkdir -p node_modules/x && echo installed > node_modules/x/f # ${nonce}`,
      };
      const first = await start(spec);
      expect(first.installCache?.hit).toBe(false);
      await install(first, spec.install as string);
      const key = installCacheKey(spec) as string;
      const entry = join(installsDir(), key);
      expect(existsSync(join(entry, 'entry.json'))).toBe(true);
      // The entry is berth's, whoever owned the trial's files it was saved from.
      const owners = await execa('find', [entry, '!', '-uid', String(process.getuid?.() ?? 0)]);
      expect(owners.stdout).toBe('');
      await first.stop();

      const second = await start(spec);
      expect(second.installCache?.hit).toBe(true);
      expect(second.baseCommit).toBe(first.baseCommit);
      expect((await second.exec('cat node_modules/x/f a.txt link.txt')).output).toBe(
        'installed\norig\norig\n',
      );
      if (ignored && (await layered())) {
        // node_modules is the entry's, bound read-only: not even a new file goes in, nor does it go away.
        const write = await second.exec(
          'echo evil > node_modules/x/f; touch node_modules/new; rm -rf node_modules; mv node_modules nm; ls node_modules',
        );
        expect(write.output).toContain('Read-only file system');
        expect(write.output).toMatch(/^x$/m);
      }
      if (second.isolated && isRoot) {
        // The copy is the trial's uid's from the start (no chown -R after it).
        const owners = await second.exec('id -u; stat -c %u . a.txt src/m.py .git .git/HEAD');
        const [uid, ...files] = owners.output.trim().split('\n');
        expect(files).toEqual(files.map(() => uid));
      }
      // What a hostile agent or test run would do: overwrite the install, the files, the history,
      // plant links, and try the entry itself by its host path.
      const attack = await second.exec(
        [
          'echo evil > node_modules/x/f',
          'echo evil > a.txt',
          'rm -f link.txt && ln -s /etc/passwd link.txt',
          'git -c user.name=a -c user.email=a@b commit -qam evil',
          'chmod 000 src/m.py',
          `echo evil > ${entry}/repo/a.txt 2>/dev/null && echo WROTE-ENTRY`,
          `echo evil > ${entry}/repo/node_modules/x/f 2>/dev/null && echo WROTE-ENTRY`,
          'true',
        ].join('; '),
      );
      expect(attack.output).not.toContain('WROTE-ENTRY');
      await second.stop();

      const third = await start(spec);
      expect(third.installCache?.hit).toBe(true);
      const seen = await third.exec(
        'cat node_modules/x/f a.txt; readlink link.txt; stat -c %a src/m.py; git log --format=%s; git status --porcelain',
      );
      expect(seen.output).toBe(`installed\norig\na.txt\n755\nbase\n${ignored ? '' : '?? node_modules/\n'}`);
      expect(third.baseCommit).toBe(first.baseCommit);
      expect(await readFile(join(entry, 'repo', 'a.txt'), 'utf8')).toBe('orig\n');
      expect(await readFile(join(entry, 'repo', 'node_modules', 'x', 'f'), 'utf8')).toBe('installed\n');
    },
  );

  it('keys an entry by snapshot content, install command, variables; never a host folder', () => {
    const spec = (files: Record<string, string>, install?: string): Task['environment'] => ({
      kind: 'local',
      snapshot: { files },
      ...(install ? { install } : {}),
    });
    const key = installCacheKey(spec({ a: '1', b: '2' }, 'npm i'));
    expect(installCacheKey(spec({ b: '2', a: '1' }, 'npm i'))).toBe(key);
    expect(installCacheKey(spec({ a: '1', b: '3' }, 'npm i'))).not.toBe(key);
    expect(installCacheKey(spec({ a: '1', b: '2' }, 'npm ci'))).not.toBe(key);
    expect(installCacheKey(spec({ a: '1', b: '2' }, 'npm i'), { NODE_ENV: 'test' })).not.toBe(key);
    expect(installCacheKey(spec({ 'a/b': '' }))).not.toBe(installCacheKey(spec({ a: '/b' })));
    expect(installCacheKey({ kind: 'local', folder: '/srv/repo' })).toBeUndefined();
  });

  it('a failing install is never cached', async () => {
    const spec: Task['environment'] = {
      kind: 'local',
      snapshot: { files: { 'a.txt': `${randomUUID()}\n` } },
      install: 'echo half > half.txt; exit 3',
    };
    const result = await runTrialWith({
      task: task(spec),
      agent: new OracleAgent(),
      attempt: 1,
      trialName: 't__1',
      trialDir: join(await temp.make('berth-speed-trial-'), 'trial'),
      jobId: 'install-cache',
      source: 'inline',
      providers: [provider],
      verifiers: [new SwebenchVerifier({ parsers: [statusLinesParser] })],
    });
    expect(result.exception_info?.exception_type).toBe('EnvironmentSetupError');
    expect(existsSync(join(installsDir(), installCacheKey(spec) as string))).toBe(false);
  });

  it('the engine runs the install in the first trial only, and every trial is graded the same', async () => {
    const spec: Task['environment'] = {
      kind: 'local',
      snapshot: { files: { 'check.sh': 'test "$(cat node_modules/x/f)" = installed\n' } },
      install: `mkdir -p node_modules/x && echo installed > node_modules/x/f # ${randomUUID()}`,
    };
    const run = async (agent = new OracleAgent() as CommandAgent | OracleAgent) => {
      const dir = await mkdtemp(join(tmpdir(), 'berth-speed-trial-'));
      try {
        return await runTrialWith({
          task: task(spec, 'sh check.sh && echo "RESULT PASSED check" || echo "RESULT FAILED check"', [
            'check',
          ]),
          agent,
          attempt: 1,
          trialName: 't__1',
          trialDir: join(dir, 'trial'),
          jobId: 'install-cache',
          source: 'inline',
          providers: [provider],
          verifiers: [new SwebenchVerifier({ parsers: [statusLinesParser] })],
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    const first = await run();
    expect(first.berth.install).toMatchObject({ exit_code: 0 });
    expect(first.berth.install?.cached).toBeUndefined();
    // An agent that breaks the installed files, in a trial started from the cache.
    const hostile = await run(
      new CommandAgent({ command: 'echo evil > node_modules/x/f; echo fixed > fix.txt' }),
    );
    expect(hostile.berth.install?.cached).toBe(true);
    expect(hostile.berth.status).toBe('unresolved');
    const later = await run();
    expect(later.exception_info).toBeNull();
    expect(later.berth.install?.cached).toBe(true);
    expect(later.berth.status).toBe('resolved');
    expect(first.berth.status).toBe('resolved');
    expect(later.berth.files.install_log).toBeUndefined();
    expect(later.verifier_result).toEqual(first.verifier_result);
  });

  it('warms a Go repository build cache once; each trial gets its own copy', async (ctx) => {
    if ((await execa('go', ['version'], { reject: false })).exitCode !== 0) ctx.skip();
    const spec: Task['environment'] = {
      kind: 'local',
      snapshot: {
        files: {
          'go.mod': `module example.com/m${Date.now()}\n\ngo 1.19\n`,
          'm.go':
            'package m\n\nimport "encoding/json"\n\nfunc F() string { b, _ := json.Marshal(1); return string(b) }\n',
          'm_test.go':
            'package m\n\nimport "testing"\n\nfunc TestF(t *testing.T) { if F() != "1" { t.Fatal(F()) } }\n',
        },
      },
    };
    const first = await start(spec);
    expect(first.installCache?.hit).toBe(false);
    const entry = join(installsDir(), installCacheKey(spec) as string);
    expect(readdirSync(join(entry, 'go-build')).length).toBeGreaterThan(0);
    await first.stop();
    const second = await start(spec);
    expect(second.installCache?.hit).toBe(true);
    const goCache = join(second.root, 'cache', 'go-build');
    expect(readdirSync(goCache).length).toBeGreaterThan(0);
    const test = await second.exec(
      'go env GOCACHE GOMOD && go test -x -count=1 ./... && echo poison > "$(go env GOCACHE)/README"',
    );
    expect(test.output).toContain(goCache);
    expect(test.exitCode).toBe(0);
    if (probeIsolation().method === 'bwrap') {
      // Every trial sees its repository at the same path, so the warm cache serves its packages:
      // the test binary is linked, nothing compiled.
      expect(test.output).toContain(`${TRIAL_ALIAS}/repo/go.mod`);
      expect(test.output).toMatch(/\/link /);
      expect(test.output).not.toMatch(/\/compile /);
    }
    expect(await readFile(join(entry, 'go-build', 'README'), 'utf8')).not.toBe('poison\n');
  });

  it('a berth killed (-9) with a read-only layer mounted leaves the next one to unmount it; the entry stays whole', async (ctx) => {
    if (!(await layered())) ctx.skip();
    const job = `install-cache-kill-${randomUUID().slice(0, 8)}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/install-cache/hold-layer.ts', randomUUID(), job],
      { cwd: join(import.meta.dirname, '..', '..'), env: process.env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const deadline = Date.now() + 60_000;
    while (!out.includes('\n') && child.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const { root, hit } = JSON.parse(out) as { root: string; hit: boolean };
    expect(hit).toBe(true);
    const layer = join(root, 'repo', 'node_modules');
    const mounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${path} `);
    expect(mounted(layer)).toBe(true);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const reclaimed = await reclaimLeftovers({ job });
    expect(reclaimed.folders).toContain(root);
    expect(mounted(layer)).toBe(false);
    expect(mounted(root)).toBe(false);
    expect(existsSync(root)).toBe(false);
    // The entry's node_modules went through the rm of the trial folder untouched.
    const entries = readdirSync(installsDir()).filter((k) =>
      existsSync(join(installsDir(), k, 'repo', 'node_modules', 'x', 'f')),
    );
    expect(entries.length).toBeGreaterThan(0);
    for (const k of entries)
      expect(readFileSync(join(installsDir(), k, 'repo', 'node_modules', 'x', 'f'), 'utf8')).toBe(
        'installed\n',
      );
  });
});
