import { existsSync, readFileSync } from 'node:fs';
import { lstat, mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHostMethod, ISOLATION_METHODS, probeIsolation } from '../../sandbox/isolation.ts';
import type { Task } from '../../tasks/task.ts';
import { type LocalEnvironment, LocalEnvironmentProvider } from './local.ts';
import { runProcess } from './process.ts';

function task(environment: Task['environment']): Task {
  return {
    name: 'env-test',
    format: 'swebench',
    origin: { file: 'inline' },
    instruction: '',
    environment,
    solution: { kind: 'none' },
    verifier: {
      kind: 'swebench',
      testPatch: '',
      testCommand: 'true',
      testFiles: [],
      failToPass: [],
      passToPass: [],
      timeoutSec: 60,
    },
    metadata: {},
  };
}

const started: LocalEnvironment[] = [];
/** Temporary folders this file made; removed when it ends. */
const temps: string[] = [];
afterAll(async () => {
  for (const env of started) await env.stop();
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

async function start(environment: Task['environment'], options = {}): Promise<LocalEnvironment> {
  const env = await new LocalEnvironmentProvider(options).start({
    task: task(environment),
    jobId: 'test',
    trialDir: tmpdir(),
  });
  started.push(env);
  return env;
}

/** True while a process runs (a zombie left for a non-reaping PID 1 counts as dead). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

// The repository belongs to the sandbox's uid when berth runs as root: this host-side git trusts it.
const git = async (cwd: string, ...args: string[]) =>
  (await execa('git', ['-c', 'safe.directory=*', ...args], { cwd })).stdout.trim();

describe('local environment: materialising a snapshot', () => {
  it('writes text, binary, symlinks and executables and commits them as the only commit', async () => {
    const env = await start({
      kind: 'local',
      snapshot: {
        files: { 'pkg/a.py': 'print("a")\n', 'run.sh': '#!/bin/sh\necho ran\n' },
        binaryFiles: { 'data/blob.bin': Buffer.from([0, 255, 10, 13]).toString('base64') },
        symlinks: { 'link.py': 'pkg/a.py' },
        executables: ['run.sh'],
      },
    });
    const dir = env.workdir;
    expect(await readFile(join(dir, 'data/blob.bin'))).toEqual(Buffer.from([0, 255, 10, 13]));
    expect((await lstat(join(dir, 'link.py'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(dir, 'link.py'))).toBe('pkg/a.py');
    expect((await stat(join(dir, 'run.sh'))).mode & 0o111).not.toBe(0);
    expect(await git(dir, 'rev-list', '--all', '--count')).toBe('1');
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    expect(await git(dir, 'ls-files', '-s', 'run.sh')).toMatch(/^100755/);
    expect(await git(dir, 'ls-files', '-s', 'link.py')).toMatch(/^120000/);
    expect(env.baseCommit).toBe(await git(dir, 'rev-parse', 'HEAD'));
    const run = await env.exec('./run.sh');
    expect(run.output).toBe('ran\n');
    expect(run.exitCode).toBe(0);
  });

  it('gives the same base sha for the same files (fixed identity and dates)', async () => {
    const a = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    const b = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    expect(a.baseCommit).toBe(b.baseCommit);
    expect(a.workdir).not.toBe(b.workdir);
  });

  it('stop() removes the folder', async () => {
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    await env.stop();
    expect(existsSync(env.root)).toBe(false);
    await env.stop();
  });
});

describe('local environment: materialising from a git mirror', () => {
  it('checks out base_commit with nothing later reachable: no commits, refs, tags, reflog or stray objects', async () => {
    const repos = await tempDir('berth-mirrors-');
    const work = join(repos, 'work');
    await execa('git', ['init', '-q', '-b', 'main', work]);
    const commit = async (file: string, content: string, message: string) => {
      await writeFile(join(work, file), content);
      await git(work, 'add', '-A');
      await git(work, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', message);
      return git(work, 'rev-parse', 'HEAD');
    };
    await writeFile(join(work, '.gitattributes'), 'tests export-ignore\n');
    await execa('mkdir', ['-p', join(work, 'tests')]);
    await writeFile(join(work, 'tests', 'test_x.py'), 'def test(): pass\n');
    const base = await commit('lib.py', 'BUG = True\n', 'base');
    await commit('lib.py', 'BUG = False  # the fix\n', 'the fix');
    await git(work, 'tag', 'v1.0');
    await execa('git', ['clone', '-q', '--mirror', work, join(repos, 'acme__widget')]);

    const env = await start({ kind: 'local', repo: 'acme/widget', baseCommit: base }, { reposDir: repos });
    const dir = env.workdir;
    expect(await readFile(join(dir, 'lib.py'), 'utf8')).toBe('BUG = True\n');
    // export-ignore files are kept (git archive would drop them).
    expect(existsSync(join(dir, 'tests', 'test_x.py'))).toBe(true);
    expect(await git(dir, 'rev-list', '--all', '--count')).toBe('1');
    expect(await git(dir, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    expect(await git(dir, 'tag')).toBe('');
    expect(await git(dir, 'remote')).toBe('');
    // Every object in the store is reachable from the single commit; the fix's blob is absent.
    const all = (await git(dir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)'))
      .split('\n')
      .sort();
    const reachable = (await git(dir, 'rev-list', '--objects', '--all'))
      .split('\n')
      .map((l) => l.split(' ')[0])
      .sort();
    expect(all).toEqual(reachable);
    const fixBlob = (
      await execa('git', ['hash-object', '--stdin'], { input: 'BUG = False  # the fix\n' })
    ).stdout.trim();
    expect(all).not.toContain(fixBlob);
    expect(await git(dir, 'log', '--format=%s')).toBe('base');
    // The mirror is untouched.
    expect(await git(join(repos, 'acme__widget'), 'rev-list', '--all', '--count')).toBe('2');
  });
});

describe('local environment: processes', () => {
  it('kills the whole process group of a command that times out', async () => {
    const dir = await tempDir('berth-proc-');
    const pidFile = join(dir, 'child.pid');
    const started = Date.now();
    const result = await runProcess(['bash', '-c', `sleep 300 & echo $! > ${pidFile}; sleep 300`], {
      cwd: dir,
      timeoutSec: 1,
    });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.output).toContain('timed out after 1 s');
    const child = Number(await readFile(pidFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(child)).toBe(false);
  });

  it('kills what a command leaves running in its group when it exits', async () => {
    const dir = await tempDir('berth-proc-');
    const pidFile = join(dir, 'bg.pid');
    const result = await runProcess(
      ['bash', '-c', `sleep 300 >/dev/null 2>&1 & echo $! > ${pidFile}; echo done`],
      { cwd: dir, timeoutSec: 30 },
    );
    expect(result.exitCode).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    const leftover = Number(await readFile(pidFile, 'utf8'));
    expect(isAlive(leftover)).toBe(false);
  });

  it('kills the groups it started when berth itself exits (a second Ctrl-C)', async () => {
    const dir = await tempDir('berth-proc-');
    const pidFile = join(dir, 'grandchild.pid');
    const processModule = new URL('./process.ts', import.meta.url).href;
    const script = [
      `import { runProcess } from ${JSON.stringify(processModule)};`,
      `void runProcess(['bash', '-c', 'sleep 300 & echo $! > ${pidFile}; sleep 300'], { cwd: ${JSON.stringify(dir)} });`,
      'setTimeout(() => process.exit(130), 1500);',
    ].join('\n');
    const scriptFile = join(dir, 'exit.mts');
    await writeFile(scriptFile, script);
    const run = await execa('node', ['--import', 'tsx', scriptFile], { reject: false });
    expect(run.exitCode).toBe(130);
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('caps output in memory and on disk with a visible truncation mark', async () => {
    const dir = await tempDir('berth-proc-');
    const outputFile = join(dir, 'out.txt');
    const result = await runProcess(
      ['bash', '-c', 'head -c 100000 /dev/zero | tr "\\0" x; echo; echo tail-line'],
      {
        cwd: dir,
        maxOutputBytes: 1000,
        outputFile,
      },
    );
    expect(result.truncated).toBe(true);
    expect(result.output.startsWith('x'.repeat(1000))).toBe(true);
    expect(result.output).toMatch(/\[berth: output truncated at 1000 bytes; \d+ more bytes dropped\]/);
    expect(result.output).not.toContain('tail-line');
    expect(await readFile(outputFile, 'utf8')).toBe(result.output);
  });

  it('records exit codes, stdin input and a command that cannot start', async () => {
    const dir = await tempDir('berth-proc-');
    expect((await runProcess(['bash', '-c', 'exit 3'], { cwd: dir })).exitCode).toBe(3);
    expect((await runProcess(['cat'], { cwd: dir, input: 'from stdin' })).output).toBe('from stdin');
    const missing = await runProcess(['/nonexistent/tool'], { cwd: dir });
    expect(missing.exitCode).not.toBe(0);
  });

  it('passes no credential-looking variables to commands', async () => {
    // breaker9: OPENAI_KEY, AZURE_OPENAI_KEY, GITHUB_PAT and a URL with a password passed before.
    const secrets = {
      BERTH_TEST_API_KEY: 'secret-value-1',
      BERTH_TEST_OPENAI_KEY: 'secret-value-2',
      BERTH_TEST_GITHUB_PAT: 'secret-value-3',
      BERTH_TEST_DATABASE_URL: 'postgres://app:secret-value-4@db.example:5432/app',
      BERTH_TEST_AUTH_HEADER: 'secret-value-5',
      // A reviewer (session 9): these passed after breaker9's fix.
      BERTH_TEST_REPO_URL: 'https://ghp_secret-value-6@github.com/o/r',
      BERTH_TEST_DB_PASS: 'secret-value-7',
      BERTH_TEST_MYSQL_PWD: 'secret-value-8',
      BERTH_TEST_GPG_PASSPHRASE: 'secret-value-9',
      BERTH_TEST_SENTRY_DSN: 'secret-value-10',
      BERTH_TEST_CI_JOB_JWT: 'secret-value-11',
      BERTH_TEST_LLM: 'sk-proj-secret-value-12',
      BERTH_TEST_PG: 'postgres://u@h/db?password=secret-value-13',
      // breaker10 F2: a credential word inside the query parameter's name.
      BERTH_TEST_SERVICE_URL: 'https://api.example.com/v1?api_key=secret-value-14',
      BERTH_TEST_HOOK_URL: 'https://hooks.example.com/x?a=1&access_token=secret-value-15',
      BERTH_TEST_SIGNED_URL: 'https://b.s3.example/o?X-Amz-Credential=c&X-Amz-Signature=secret-value-16',
    };
    Object.assign(process.env, secrets, {
      BERTH_TEST_PLAIN_URL: 'https://example.org:8443/plain-url-kept?page=2&q=x',
    });
    try {
      const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
      const run = await env.exec('env');
      expect(run.output).not.toMatch(/secret-value/);
      expect(run.output).toContain('plain-url-kept');
      expect(run.output).toContain('PATH=');
    } finally {
      for (const name of [...Object.keys(secrets), 'BERTH_TEST_PLAIN_URL']) delete process.env[name];
    }
  });

  it('a command has its own System V IPC: it sees none of the segments of the host and leaves none behind', async (ctx) => {
    // breaker10 F1: with the host's IPC namespace, shared memory outlived the trial (past its
    // memory limit) and a later trial's agent read what an earlier trial's tests had put there.
    if (checkHostMethod('bwrap') !== undefined)
      ctx.skip(`bwrap unavailable here: ${checkHostMethod('bwrap')}`);
    const segments = async () =>
      (await execa('ipcs', ['-m'])).stdout
        .split('\n')
        .filter((line) => /^0x/.test(line))
        .map((line) => line.split(/\s+/)[1]);
    const made = /(\d+)\s*$/.exec((await execa('ipcmk', ['-M', '4096'])).stdout)?.[1];
    expect(made).toBeDefined();
    try {
      const before = await segments();
      expect(before).toContain(made);
      const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } }, { isolation: 'bwrap' });
      const run = await env.exec('ipcs -m | grep -c "^0x" || true; ipcmk -M 8192 >/dev/null && echo made');
      expect(run.output.trim().split('\n')).toEqual(['0', 'made']);
      expect(await segments()).toEqual(before);
    } finally {
      await execa('ipcrm', ['-m', made as string]);
    }
  });

  it('a descriptor berth inherited without close-on-exec never reaches a command (breaker13 F1)', async (ctx) => {
    // breaker13 F1: a descriptor of the host's / that berth's own parent leaked reached the
    // sandboxed agent, which climbed /proc/self/fd/N/.. to the host (the dataset's gold patch).
    if (checkHostMethod('bwrap') !== undefined)
      ctx.skip(`bwrap unavailable here: ${checkHostMethod('bwrap')}`);
    const trialDir = await tempDir('berth-fd-leak-');
    const script = `import { LocalEnvironmentProvider } from ${JSON.stringify(join(import.meta.dirname, 'local.ts'))};
const task = { name: 'fd-test', format: 'swebench', origin: { file: 'inline' }, instruction: '',
  environment: { kind: 'local', snapshot: { files: { x: '1' } } }, solution: { kind: 'none' },
  verifier: { kind: 'swebench', testPatch: '', testCommand: 'true', testFiles: [], failToPass: [], passToPass: [], timeoutSec: 60 },
  metadata: {} };
for (const isolation of ['bwrap', undefined]) {
  const env = await new LocalEnvironmentProvider(isolation ? { isolation } : {}).start({ task, jobId: 'fd', trialDir: ${JSON.stringify(trialDir)} });
  const run = await env.exec('ls /proc/self/fd/200/ >/dev/null 2>&1 && echo "fd 200 open" || echo "fd 200 closed"; ls /proc/self/fd/1000/ >/dev/null 2>&1 && echo "fd 1000 open" || echo "fd 1000 closed"');
  console.log(JSON.stringify({ isolation: isolation ?? 'none', output: run.output.trim() }));
  await env.stop();
}
`;
    // The shell opens / at 200 and 1000 without close-on-exec, as a leaking parent would.
    const child = await execa(
      'bash',
      ['-c', 'exec 200</ 1000</; exec "$@"', 'leak', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
      { reject: false, timeout: 120_000 },
    );
    expect(child.exitCode, child.stderr).toBe(0);
    const runs = child.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { isolation: string; output: string });
    expect(runs).toEqual([
      { isolation: 'bwrap', output: 'fd 200 closed\nfd 1000 closed' },
      { isolation: 'none', output: 'fd 200 closed\nfd 1000 closed' },
    ]);
  });

  it('bwrap shows an allow-list of the host: not the folder this test runs from, nor /var or /home', async (ctx) => {
    if (checkHostMethod('bwrap') !== undefined)
      ctx.skip(`bwrap unavailable here: ${checkHostMethod('bwrap')}`);
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } }, { isolation: 'bwrap' });
    const here = join(process.cwd(), 'package.json');
    expect(existsSync(here)).toBe(true);
    const run = await env.exec(
      `for p in ${here} /var /home /srv /run /usr/bin/git /etc/passwd; do [ -e "$p" ] && echo "seen $p" || echo "hidden $p"; done; python3 -c 'print("python ok")'`,
    );
    expect(run.output).toBe(
      [
        `hidden ${here}`,
        'hidden /var',
        'hidden /home',
        'hidden /srv',
        'hidden /run',
        'seen /usr/bin/git',
        'seen /etc/passwd',
        'python ok',
        '',
      ].join('\n'),
    );
  });
});

describe('local environment: network isolation', () => {
  it('records whether untrusted commands are isolated, and isolation really removes the network', async () => {
    const probe = probeIsolation();
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    expect(env.isolated).toBe(probe.method !== undefined);
    if (!probe.method) {
      console.warn(`network isolation unavailable here: ${probe.notes.join('; ')}`);
      return;
    }
    const interfaces = (text: string) =>
      text
        .split('\n')
        .slice(2)
        .map((l) => l.split(':')[0]?.trim())
        .filter(Boolean);
    const isolated = await env.exec('cat /proc/net/dev');
    expect(interfaces(isolated.output)).toEqual(['lo']);
    const open = await env.exec('cat /proc/net/dev', { network: { mode: 'public' } });
    expect(interfaces(open.output).length).toBeGreaterThan(1);
  });

  it('every isolation method that works here cuts the network but keeps loopback', async () => {
    const server = [
      'import socket',
      "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()",
      'c = socket.create_connection(s.getsockname())',
      "print('loopback ok')",
    ].join('; ');
    let tried = 0;
    for (const method of ISOLATION_METHODS) {
      if (checkHostMethod(method) !== undefined) continue;
      tried++;
      const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } }, { isolation: method });
      expect(env.isolationMethodName).toBe(method);
      const run = await env.exec(
        `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; python3 -c "${server}"`,
      );
      expect(run.output).toBe('lo\nloopback ok\n');
    }
    if (tried === 0) console.warn('no isolation method works here');
  });

  it('trusted bookkeeping runs in the sandbox too, as the trial uid, and git accepts the repository', async () => {
    const probe = probeIsolation();
    if (!probe.method) {
      console.warn(`isolation unavailable here: ${probe.notes.join('; ')}`);
      return;
    }
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    const run = await env.exec('tail -n +3 /proc/net/dev | wc -l; id -u; git status --porcelain; echo $$', {
      trusted: true,
    });
    // No warning either (e.g. git unable to read a config under an unreadable HOME).
    const [interfaces, uid, pid, ...rest] = run.output.trim().split('\n');
    expect(rest).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(interfaces).toBe('1');
    if (process.getuid?.() === 0) expect(Number(uid)).toBeGreaterThan(0);
    expect(Number(pid)).toBeLessThan(10);
  });

  it("the dataset's set-up command runs with berth's rights; what it leaves goes to the trial's uid", async () => {
    const probe = probeIsolation();
    if (!probe.method || process.getuid?.() !== 0) {
      console.warn('needs root and a working isolation method');
      return;
    }
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } });
    const setup = await env.exec('id -u; echo built > built.txt', {
      setup: true,
      network: { mode: 'public' },
    });
    expect(setup.output).toBe('0\n');
    const sandboxed = await env.exec('id -u; echo more >> built.txt && cat built.txt');
    expect(sandboxed.output).toMatch(/^[1-9]\d*\nbuilt\nmore\n$/);
  });

  it('isolation off is recorded as not isolated', async () => {
    const env = await start({ kind: 'local', snapshot: { files: { x: '1' } } }, { isolation: 'off' });
    expect(env.isolated).toBe(false);
  });
});
