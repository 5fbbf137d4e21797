import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../environments/environment.ts';
import { runMultilingualVerification } from './verify.ts';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A repository in a temporary folder, and an environment whose commands run there in bash. */
function repository(): { env: Environment; repo: string; base: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), 'berth-multilingual-verify-'));
  made.push(root);
  const repo = join(root, 'repo');
  mkdirSync(join(repo, 'pkg'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: repo,
      encoding: 'utf8',
    });
  git('init', '-q');
  writeFileSync(join(repo, 'pkg', 'a.go'), 'package pkg\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  const env: Environment = {
    kind: 'test',
    workdir: repo,
    isolated: false,
    exec: async (command) => {
      const run = spawnSync('bash', ['-c', `exec 2>&1\n${command}`], { cwd: repo, encoding: 'utf8' });
      return { exitCode: run.status, timedOut: false, output: run.stdout, truncated: false, durationSec: 0 };
    },
    upload: async (from, to) => copyFileSync(from, to),
    download: () => Promise.reject(new Error('nothing to download here')),
    stop: async () => {},
  };
  return { env, repo, base: git('rev-parse', 'HEAD').trim(), dir: join(root, 'verifier') };
}

describe('runMultilingualVerification', () => {
  it('refuses a diff that names a test file whose name is not UTF-8: reward 0, no reset, no test run', async () => {
    const { env, repo, base, dir } = repository();
    // The real name holds the byte 0xFF; read lossily it would be pkg/zz\uFFFD_test.go, a name
    // the reset removes while the real file stays for the test run.
    const name = Buffer.concat([
      Buffer.from(join(repo, 'pkg', 'zz')),
      Buffer.from([0xff]),
      Buffer.from('_test.go'),
    ]);
    writeFileSync(name, 'package pkg\n');
    const result = await runMultilingualVerification(
      env,
      {
        kind: 'multilingual',
        baseCommit: base,
        testPatch: '',
        testCommand: 'echo ran > ran.txt',
        parser: 'go',
        failToPass: ['TestA'],
        passToPass: [],
        passToFail: [],
        failToFail: [],
        timeoutSec: 60,
      },
      dir,
      60,
    );
    expect(result.rewards.reward).toBe(0);
    expect(result.exception?.type).toBe('UndecodablePathError');
    expect(result.exception?.message).toContain('zz\\377_test.go');
    expect(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')).exception.type).toBe(
      'UndecodablePathError',
    );
    expect(existsSync(join(repo, 'ran.txt'))).toBe(false);
  });

  it('fails closed on test-runner settings among the code changes (tampering, no test run); a markers change is code (trust12)', async () => {
    const spec = (base: string): Parameters<typeof runMultilingualVerification>[1] => ({
      kind: 'multilingual',
      baseCommit: base,
      // A real test patch, so that the test command runs when nothing is refused.
      testPatch:
        'diff --git a/pkg/t.txt b/pkg/t.txt\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/t.txt\n@@ -0,0 +1 @@\n+t\n',
      testCommand: 'echo ran > ran.txt',
      parser: 'go',
      failToPass: ['TestA'],
      passToPass: [],
      passToFail: [],
      failToFail: [],
      timeoutSec: 60,
    });
    const pyproject = (options: string) =>
      `[project]\nname = "pkg"\nversion = "1.0"\n\n[tool.pytest.ini_options]\n${options}`;
    for (const [name, files, vetoed] of [
      [
        'pyproject.toml addopts',
        { 'pyproject.toml': pyproject('addopts = "-p pkg.forge"\n') },
        'pyproject.toml',
      ],
      [
        'tox.ini [pytest]',
        { 'tox.ini': '[tox]\nenvlist = py3\n\n[pytest]\naddopts = -p pkg.forge\n' },
        'tox.ini',
      ],
      ['a module shadowing pytest', { 'pytest.py': 'raise SystemExit(0)\n' }, 'pytest.py'],
      [
        'pyproject.toml markers and version',
        { 'pyproject.toml': pyproject('markers = ["slow"]\n').replace('1.0', '1.1') },
        undefined,
      ],
    ] as const) {
      const { env, repo, dir } = repository();
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
          cwd: repo,
          encoding: 'utf8',
        });
      writeFileSync(join(repo, 'pyproject.toml'), pyproject('minversion = "7.0"\n'));
      git('add', '-A');
      git('commit', '-qm', 'settings');
      const base = git('rev-parse', 'HEAD').trim();
      for (const [path, text] of Object.entries(files)) writeFileSync(join(repo, path), text);
      const result = await runMultilingualVerification(env, spec(base), dir, 60);
      const tampering = result.details?.tampering as
        | { vetoed: boolean; findings: { paths?: string[] }[] }
        | undefined;
      if (vetoed) {
        expect(result.rewards.reward, name).toBe(0);
        expect(result.status, name).toBe('unresolved');
        expect(result.reason, name).toMatch(/^tampering: /);
        expect(tampering?.vetoed, name).toBe(true);
        expect(
          tampering?.findings.flatMap((f) => f.paths ?? []),
          name,
        ).toEqual([vetoed]);
        expect(existsSync(join(repo, 'ran.txt')), name).toBe(false);
        expect(
          JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')).details.tampering.vetoed,
          name,
        ).toBe(true);
      } else {
        expect(tampering, name).toBeUndefined();
        expect(existsSync(join(repo, 'ran.txt')), name).toBe(true);
      }
    }
  });
  it('resets JavaScript runner settings a fix may change too and runs the tests without them (no veto); a devDependency bump is code (trust19)', async () => {
    const pkg = { name: 'pkg', version: '1.0.0', scripts: { test: 'node --test test/' } };
    for (const [name, next, reset] of [
      ['scripts.test and a vitest config', { ...pkg, scripts: { test: 'node --test test/ || true' } }, true],
      ['a devDependency bump', { ...pkg, devDependencies: { tap: '^16.3.0' } }, false],
    ] as const) {
      const { env, repo, dir } = repository();
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
          cwd: repo,
          encoding: 'utf8',
        });
      writeFileSync(join(repo, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
      git('add', '-A');
      git('commit', '-qm', 'package');
      const base = git('rev-parse', 'HEAD').trim();
      writeFileSync(join(repo, 'package.json'), `${JSON.stringify(next, null, 2)}\n`);
      if (reset) writeFileSync(join(repo, 'vitest.config.js'), 'export default {};\n');
      const result = await runMultilingualVerification(
        env,
        {
          kind: 'multilingual',
          baseCommit: base,
          testPatch:
            'diff --git a/pkg/t.txt b/pkg/t.txt\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/t.txt\n@@ -0,0 +1 @@\n+t\n',
          testCommand:
            'cat package.json > ran.txt; ls vitest.config.js >> ran.txt 2>&1; echo "--- PASS: TestA (0.00s)"',
          parser: 'go',
          failToPass: ['TestA'],
          passToPass: [],
          passToFail: [],
          failToFail: [],
          timeoutSec: 60,
        },
        dir,
        60,
      );
      const tampering = result.details?.tampering as
        | { vetoed: boolean; findings: { paths?: string[] }[] }
        | undefined;
      const ran = readFileSync(join(repo, 'ran.txt'), 'utf8');
      if (reset) {
        expect(tampering?.vetoed, name).toBe(false);
        expect(tampering?.findings.flatMap((f) => f.paths ?? []).sort(), name).toEqual([
          'package.json',
          'vitest.config.js',
        ]);
        expect(JSON.parse(ran.slice(0, ran.lastIndexOf('}') + 1)), name).toEqual(pkg);
        expect(ran, name).toMatch(/No such file/);
      } else {
        expect(tampering, name).toBeUndefined();
        expect(ran, name).toContain('"tap": "^16.3.0"');
      }
      expect(result.rewards.reward, name).toBe(1);
    }
  });
});
