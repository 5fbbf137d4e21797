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

const provider = new LocalEnvironmentProvider();
/** Whether trials here get the entry as an overlay (root, capped trial folders, perl, a kernel that lets it). */
const overlaid = async () => isRoot && (await cappedFolderSupport()) === undefined;
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

/** Every file of `dir` with its type, mode, owner, size, link target and content hash: what a trial must not change. */
async function fingerprint(dir: string): Promise<string> {
  const list = await execa('find', [dir, '-printf', '%P %y %m %u:%g %s %l\n'], { cwd: dir });
  const sums = await execa('bash', ['-c', 'find . -type f -print0 | sort -z | xargs -0 sha256sum'], {
    cwd: dir,
  });
  return `${list.stdout.split('\n').sort().join('\n')}\n${sums.stdout}`;
}

/** The file system type mounted at `path` (the last mount there), from /proc/self/mountinfo. */
function mountedType(path: string): string | undefined {
  let type: string | undefined;
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    if (left?.split(' ')[4] === path) type = right?.split(' ')[0];
  }
  return type;
}

describe('install once, materialise once (local environment)', () => {
  it.each([
    ['not ignored by git', false],
    ['ignored by git', true],
  ])(
    'a trial that writes into the cached install cannot change the entry nor the next trial: node_modules %s',
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
        install: `mkdir -p node_modules/x node_modules/y && echo installed > node_modules/x/f && echo y > node_modules/y/g && chmod 644 node_modules/x/f # ${nonce}`,
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
      const before = await fingerprint(entry);

      const second = await start(spec);
      expect(second.installCache?.hit).toBe(true);
      expect(second.baseCommit).toBe(first.baseCommit);
      if (await overlaid()) {
        // Copy-on-write: the repository is an overlay on the entry, nothing copied.
        expect(second.installCache?.method).toBe('overlay');
        expect(mountedType(second.workdir)).toBe('overlay');
      } else expect(second.installCache?.method).toBe('copy');
      expect((await second.exec('cat node_modules/x/f a.txt link.txt')).output).toBe(
        'installed\norig\norig\n',
      );
      if (second.isolated && isRoot) {
        // The repository is the trial's uid's from the start (no chown -R after it).
        const owners = await second.exec(
          'id -u; stat -c %u . a.txt src/m.py .git .git/HEAD node_modules node_modules/x/f',
        );
        const [uid, ...files] = owners.output.trim().split('\n');
        expect(files).toEqual(files.map(() => uid));
      }
      // What a hostile agent or test run would do: change, delete, add and chmod installed files,
      // rename an installed folder, plant a link and a setuid file, rewrite the history, and try
      // the entry by its host path and the overlay's own folders.
      const attack = await second.exec(
        [
          'set -e',
          'echo evil > node_modules/x/f',
          'rm -rf node_modules/y',
          'mkdir node_modules/z && echo new > node_modules/z/h',
          'chmod 600 node_modules/x/f',
          'mv node_modules/x node_modules/x2 && mv node_modules/x2 node_modules/x',
          'ln -s /etc/passwd node_modules/planted',
          'cp /bin/true node_modules/suid && chmod 4755 node_modules/suid && test -u node_modules/suid',
          'echo evil > a.txt',
          'rm -f link.txt && ln -s /etc/passwd link.txt',
          'git -c user.name=a -c user.email=a@b commit -qam evil',
          'chmod 000 src/m.py',
          'set +e',
          `echo evil > ${entry}/repo/a.txt 2>/dev/null && echo WROTE-ENTRY`,
          `echo evil > ${entry}/repo/node_modules/x/f 2>/dev/null && echo WROTE-ENTRY`,
          `ls ${second.root}/.overlay 2>/dev/null && echo SAW-OVERLAY`,
          'echo done',
        ].join('\n'),
      );
      expect(attack.output).not.toContain('WROTE-ENTRY');
      expect(attack.output).not.toContain('SAW-OVERLAY');
      expect(attack.output.trim().split('\n').at(-1)).toBe('done');
      expect(attack.exitCode).toBe(0);
      await second.stop();
      expect(await fingerprint(entry)).toBe(before);

      const third = await start(spec);
      expect(third.installCache?.hit).toBe(true);
      const seen = await third.exec(
        'cat node_modules/x/f node_modules/y/g a.txt; readlink link.txt; stat -c %a src/m.py node_modules/x/f; ls node_modules; git log --format=%s; git status --porcelain',
      );
      expect(seen.output).toBe(
        `installed\ny\norig\na.txt\n755\n644\nx\ny\nbase\n${ignored ? '' : '?? node_modules/\n'}`,
      );
      expect(third.baseCommit).toBe(first.baseCommit);
      await third.stop();
      expect(await fingerprint(entry)).toBe(before);
    },
  );

  it("an agent's npm install from an offline npm cache and tests that write node_modules/.cache work, and leave nothing behind", async (ctx) => {
    // An npm cache with two versions of is-number and is-odd (which needs is-number 6), made on
    // the host from the registry: the trial has no network and installs --offline from its copy.
    const npmCache = await temp.make('berth-speed-npm-cache-');
    const add = await execa(
      'npm',
      ['cache', 'add', 'is-number@7.0.0', 'is-number@6.0.0', 'is-odd@3.0.1', '--cache', npmCache],
      { reject: false, timeout: 120_000 },
    );
    if (add.exitCode !== 0) ctx.skip(`the npm registry is not reachable: ${add.stderr.split('\n').at(-1)}`);
    const npm = `npm --offline --no-audit --no-fund --cache "${npmCache}"`;
    const spec: Task['environment'] = {
      kind: 'local',
      snapshot: {
        files: {
          '.gitignore': 'node_modules/\n',
          'package.json': '{ "name": "cow", "version": "1.0.0", "private": true }\n',
          // A test that writes node_modules/.cache, as nyc, ava or @babel/register do.
          'cache.test.mjs': [
            "import { test } from 'node:test';",
            "import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';",
            "test('writes node_modules/.cache', () => {",
            "  mkdirSync('node_modules/.cache/cow', { recursive: true });",
            "  writeFileSync('node_modules/.cache/cow/seen', 'yes');",
            "  if (readFileSync('node_modules/.cache/cow/seen', 'utf8') !== 'yes') throw new Error('not written');",
            '});',
            '',
          ].join('\n'),
        },
      },
      install: `${npm} install is-number@7.0.0 # ${randomUUID()}`,
    };
    const first = await start(spec);
    await install(first, spec.install as string);
    await first.stop();
    const entry = join(installsDir(), installCacheKey(spec) as string);
    const before = await fingerprint(entry);

    const second = await start(spec);
    expect(second.installCache?.hit).toBe(true);
    // The trial's own copy of the npm cache (npm writes its index and logs there).
    await second.upload(npmCache, join(second.root, 'tmp', 'npm-cache'));
    const own = `npm --offline --no-audit --no-fund --cache ${join(second.root, 'tmp', 'npm-cache')}`;
    const run = await second.exec(
      [
        'set -e',
        // Replaces an installed package (npm moves its folder aside) and adds one.
        `${own} install is-number@6.0.0 is-odd@3.0.1 >/dev/null`,
        `node -e "console.log(require('is-odd')(3), require('is-number/package.json').version)"`,
        'node --test cache.test.mjs >/dev/null && echo tests-passed',
        'cat node_modules/.cache/cow/seen; echo',
      ].join('\n'),
      { timeoutSec: 300 },
    );
    expect(run.output).toBe('true 6.0.0\ntests-passed\nyes\n');
    await second.stop();
    expect(await fingerprint(entry)).toBe(before);

    const third = await start(spec);
    const seen = await third.exec(
      `node -p "require('is-number/package.json').version"; ls node_modules; grep -l is-odd package.json package-lock.json || echo no-is-odd`,
    );
    expect(seen.output).toBe('7.0.0\nis-number\nno-is-odd\n');
    await third.stop();
  });

  it('where the overlay cannot be mounted, the trial gets a copy and its record says why', async (ctx) => {
    if (!(await overlaid())) ctx.skip('needs root and capped trial folders (no overlay is tried)');
    // overlayfs reads "," in a layer's path as a separator: berth copies such an entry instead.
    const odd = await mkdtemp(join(tmpdir(), 'berth-speed-cache,odd-'));
    process.env.BERTH_CACHE_DIR = odd;
    try {
      const spec: Task['environment'] = {
        kind: 'local',
        snapshot: { files: { '.gitignore': 'node_modules/\n', 'a.txt': `${randomUUID()}\n` } },
        install: 'mkdir -p node_modules/x && echo installed > node_modules/x/f',
      };
      const first = await start(spec);
      await install(first, spec.install as string);
      await first.stop();
      const second = await start(spec);
      expect(second.installCache).toMatchObject({ hit: true, method: 'copy' });
      expect(second.installCache?.note).toMatch(/^overlay not mounted \(a path holds , : or \\\): copied$/);
      expect(mountedType(second.workdir)).toBeUndefined();
      const run = await second.exec('echo more >> node_modules/x/f && cat node_modules/x/f');
      expect(run.output).toBe('installed\nmore\n');
      await second.stop();
    } finally {
      process.env.BERTH_CACHE_DIR = cacheDir;
      await rm(odd, { recursive: true, force: true });
    }
  });

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
    // The trial's record says how its files were made from the entry.
    expect(first.berth.install_cache).toEqual({ hit: false });
    expect(later.berth.install_cache).toEqual(
      (await overlaid())
        ? { hit: true, method: 'overlay' }
        : expect.objectContaining({ hit: true, method: 'copy' }),
    );
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

  it('a berth killed (-9) with an overlay mounted leaves the next one to unmount it; the entry stays whole', async (ctx) => {
    if (!(await overlaid())) ctx.skip();
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
    const layer = join(root, 'repo');
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

/** breaker5's overlay attacks (round 5, no finding): kept as a regression test. */
describe('breaker5: the overlay never reaches the entry', () => {
  it('O_TMPFILE, overlay xattrs, hard links, mmap, truncate, /proc fd reopen, git gc, chattr and renames leave the entry and the next trial as they were', async (ctx) => {
    if (!(await overlaid())) ctx.skip();
    const nonce = randomUUID();
    const spec: Task['environment'] = {
      kind: 'local',
      snapshot: { files: { 'a.txt': 'orig\n', '.gitignore': 'node_modules/\n' } },
      install: `mkdir -p node_modules/x node_modules/y && echo installed > node_modules/x/f && echo y > node_modules/y/g && head -c 65536 /dev/zero > node_modules/y/big # ${nonce}`,
    };
    const first = await start(spec);
    await install(first, spec.install as string);
    const entry = join(installsDir(), installCacheKey(spec) as string);
    await first.stop();
    const before = await fingerprint(entry);
    const second = await start(spec);
    expect(second.installCache?.method).toBe('overlay');
    const py = (code: string) => `python3 -c ${JSON.stringify(code)} 2>&1 || true`;
    const attack = await second.exec(
      [
        py(
          "import os; fd=os.open('node_modules/x', os.O_TMPFILE|os.O_RDWR, 0o644); os.write(fd, b'tmp'); os.link('/proc/self/fd/%d' % fd, 'node_modules/x/tmpf'); print('tmpfile ok')",
        ),
        py("import os; os.setxattr('node_modules', 'trusted.overlay.opaque', b'y'); print('XATTR-SET')"),
        py(
          "import os; os.setxattr('node_modules/y', 'trusted.overlay.redirect', b'/node_modules/x'); print('XATTR-SET')",
        ),
        py("import os; os.setxattr('node_modules/x/f', 'user.evil', b'1'); print('user xattr ok')"),
        'exec 3<node_modules/y/g; echo evil-fd > /proc/self/fd/3 2>&1; exec 3<&-',
        'ln node_modules/x/f node_modules/hl && echo evil-hl >> node_modules/hl',
        py(
          "import mmap,os; fd=os.open('node_modules/y/big', os.O_RDWR); m=mmap.mmap(fd, 65536); m[0:4]=b'EVIL'; m.flush(); print('mmap ok')",
        ),
        'truncate -s 1 a.txt; fallocate -l 1M node_modules/y/g 2>&1 || true',
        'chattr +i node_modules/x/f 2>&1 || true',
        'mv node_modules/y node_modules/y2 && echo evil > node_modules/y2/new && mv node_modules/y2 node_modules/y',
        'mkdir -p node_modules/.cache && mv node_modules/x node_modules/.cache/x && ln -s /etc node_modules/x',
        'git -c gc.auto=0 gc --prune=now -q 2>&1; git repack -adq 2>&1; true',
        'mknod node_modules/dev c 1 3 2>&1 || true; mkfifo node_modules/fifo',
        'echo done',
      ].join('\n'),
    );
    expect(attack.output).not.toContain('XATTR-SET');
    await second.stop();
    expect(await fingerprint(entry)).toBe(before);
    const third = await start(spec);
    const seen = await third.exec(
      'cat node_modules/x/f node_modules/y/g a.txt; head -c 4 node_modules/y/big | od -c | head -1; ls -a node_modules; git count-objects -v | head -2',
    );
    expect(seen.output).toContain('installed\ny\norig\n');
    await third.stop();
  }, 600_000);
});
