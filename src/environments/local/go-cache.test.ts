/**
 * The Go compile step's script and environment (go-cache.ts) on real go and bash: it runs no
 * program found by name (breaker5: whatever the repository can run there could write the cache
 * berth merges), and with its environment go neither runs cgo nor an external linker.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { isRoot, processesOfUid } from '../../sandbox/identity.ts';
import { COMPILE_ENV, compileScript, goTool, readCompileOutput, SYSTEM_PATH } from './go-cache.ts';
import { installsDir, mergeGoCache } from './install-cache.ts';

const dirs: string[] = [];
/** One build cache for every run here (outside the repositories: content-addressed, shared is fine). */
let goCache: string | undefined;
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A module with one cgo package, and planted tools (`tar`, `sha256sum`, `cut`, `gcc`, `ld`, `go`) that leave a mark. */
async function hostileModule(): Promise<{ repo: string; mark: string }> {
  const repo = await mkdtemp(join(tmpdir(), 'berth-gofix-'));
  dirs.push(repo);
  const mark = join(repo, 'ran');
  await writeFile(join(repo, 'go.mod'), 'module example.com/gofix\n\ngo 1.19\n');
  await mkdir(join(repo, 'c'));
  await writeFile(
    join(repo, 'c', 'c.go'),
    'package c\n\n// int one(void) { return 1; }\nimport "C"\n\nfunc One() int { return int(C.one()) }\n',
  );
  await writeFile(
    join(repo, 'c', 'c_test.go'),
    'package c\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {}\n',
  );
  await writeFile(join(repo, 'p.go'), 'package gofix\n\nfunc P() int { return 1 }\n');
  await writeFile(
    join(repo, 'p_test.go'),
    'package gofix\n\nimport "testing"\n\nfunc TestP(t *testing.T) {}\n',
  );
  for (const tool of ['tar', 'sha256sum', 'cut', 'gcc', 'cc', 'ld', 'go', 'true']) {
    await writeFile(join(repo, tool), `#!/bin/sh\necho ${tool} >> ${mark}\nexit 1\n`);
    await chmod(join(repo, tool), 0o755);
  }
  return { repo, mark };
}

/** Runs the compile script in `repo` with `env` on top of the host's. */
async function runScript(
  repo: string,
  go: string,
  env: Record<string, string>,
  cgoCheck = false,
  packages = ['./c'],
) {
  if (!goCache) {
    goCache = await mkdtemp(join(tmpdir(), 'berth-gofix-cache-'));
    dirs.push(goCache);
  }
  // Without the cgo check (the step's own skip of a module with C files), to reach go itself.
  const run = await execa('bash', ['-c', compileScript(go, packages, { cgoCheck })], {
    cwd: repo,
    env: { ...process.env, GOCACHE: goCache, ...env },
    extendEnv: false,
    reject: false,
    all: true,
  });
  return readCompileOutput(run.all ?? '');
}

describe('the Go compile step (go-cache.ts)', () => {
  it('names every tool by absolute path: planted tools on a PATH that holds the repository never run', async (ctx) => {
    const go = goTool();
    if (!go) return ctx.skip('no go on PATH');
    const { repo, mark } = await hostileModule();
    // A host PATH with the repository first (the worst case): the script's own tools are still the system's.
    const out = await runScript(repo, go, { ...COMPILE_ENV, PATH: `${repo}:${SYSTEM_PATH}` });
    expect(out.content).toMatch(/^[0-9a-f]{64}$/);
    expect(out.exit).toBeDefined();
    expect(existsSync(mark)).toBe(false);
    // The content hash is tar's, not a constant: another file changes it.
    await writeFile(join(repo, 'q.go'), 'package gofix\n');
    expect((await runScript(repo, go, { ...COMPILE_ENV, PATH: `${repo}:${SYSTEM_PATH}` })).content).not.toBe(
      out.content,
    );
    expect(existsSync(mark)).toBe(false);
  });

  it('the step runs no C compiler and no linker of anyone: with cgo on the same PATH the planted gcc would run', async (ctx) => {
    const go = goTool();
    if (!go) return ctx.skip('no go on PATH');
    const { repo, mark } = await hostileModule();
    expect(COMPILE_ENV.CGO_ENABLED).toBe('0');
    expect(COMPILE_ENV.GO_EXTLINK_ENABLED).toBe('0');
    expect(COMPILE_ENV.PATH).toBe(SYSTEM_PATH);
    // COMPILE_ENV's PATH wins over a host PATH that holds the repository.
    await runScript(repo, go, { PATH: `${repo}:${SYSTEM_PATH}`, ...COMPILE_ENV });
    expect(existsSync(mark)).toBe(false);
    // The control: cgo on, the repository on PATH -> go runs the planted compiler.
    await runScript(repo, go, { ...COMPILE_ENV, CGO_ENABLED: '1', PATH: `${repo}:${SYSTEM_PATH}` });
    expect(existsSync(mark)).toBe(true);
  });

  it('compiles nothing when the tests build a package with C files (the tests would compile it all again), and only then', async (ctx) => {
    const go = goTool();
    if (!go) return ctx.skip('no go on PATH');
    const { repo, mark } = await hostileModule();
    const out = await runScript(repo, go, { ...COMPILE_ENV, PATH: `${repo}:${SYSTEM_PATH}` }, true);
    expect(out).toMatchObject({ cgo: true, hit: false });
    expect(out.exit).toBeUndefined();
    expect(existsSync(mark)).toBe(false);
    // Without the C package, the same module is compiled.
    await rm(join(repo, 'c'), { recursive: true });
    const pure = await execa('bash', ['-c', compileScript(go, [])], {
      cwd: repo,
      env: { ...process.env, GOCACHE: goCache ?? join(repo, '.cache'), ...COMPILE_ENV },
      extendEnv: false,
      reject: false,
      all: true,
    });
    expect(readCompileOutput(pure.all ?? '')).toMatchObject({ cgo: false, exit: 0 });
  });

  it('compiles with cgo on when only the standard library uses cgo (net), and a //line-smuggled link flag reaches no linker', async (ctx) => {
    const go = goTool();
    if (!go) return ctx.skip('no go on PATH');
    const repo = await mkdtemp(join(tmpdir(), 'berth-gofix-net-'));
    dirs.push(repo);
    const mark = join(repo, 'ran');
    await writeFile(join(repo, 'go.mod'), 'module example.com/gonet\n\ngo 1.19\n');
    await writeFile(
      join(repo, 'n.go'),
      'package gonet\n\nimport "net"\n\nfunc N() string { return net.JoinHostPort("a", "1") }\n',
    );
    await writeFile(
      join(repo, 'n_test.go'),
      'package gonet\n\nimport "testing"\n\nfunc TestN(t *testing.T) { _ = N() }\n',
    );
    // breaker5's trick without a cgo file: a Go file whose //line makes it look cgo-generated
    // carries a link flag pointing gcc at the repository's own `ld` (CVE-2023-39323).
    await writeFile(
      join(repo, 'd.go'),
      `package gonet\n\n//line _cgo_zz.go:1\n//go:cgo_ldflag "-B${repo}/hook/"\nfunc zz() {}\n`,
    );
    await mkdir(join(repo, 'hook'));
    for (const tool of ['ld', 'gcc', 'cc', 'collect2', 'as']) {
      for (const dir of [repo, join(repo, 'hook')]) {
        await writeFile(join(dir, tool), `#!/bin/sh\necho ${tool} >> ${mark}\nexit 1\n`);
        await chmod(join(dir, tool), 0o755);
      }
    }
    // COMPILE_ENV's PATH (the system's) wins over a host PATH that holds the repository, as in
    // the step: go finds gcc (for `net`'s C files, where the cache lacks them) on it alone.
    const out = await runScript(repo, go, { PATH: `${repo}:${SYSTEM_PATH}`, ...COMPILE_ENV }, true, ['.']);
    expect(out).toMatchObject({ cgo: false, stdCgo: true });
    expect(out.exit).toBeDefined();
    expect(existsSync(mark)).toBe(false);
    // The same module with a cgo file of its own: nothing is compiled.
    await writeFile(
      join(repo, 'c.go'),
      'package gonet\n\n// int one(void) { return 1; }\nimport "C"\n\nfunc One() int { return int(C.one()) }\n',
    );
    const withC = await runScript(repo, go, { PATH: `${repo}:${SYSTEM_PATH}`, ...COMPILE_ENV }, true, ['.']);
    expect(withC).toMatchObject({ cgo: true, stdCgo: false });
    expect(withC.exit).toBeUndefined();
    expect(existsSync(mark)).toBe(false);
  });

  it('processesOfUid lists a process of a uid while it lives, and not after', async (ctx) => {
    if (!isRoot || !existsSync('/proc/self/status')) return ctx.skip('needs root and /proc');
    const uid = 64999;
    expect(processesOfUid(uid)).toEqual([]);
    const child = spawn('sleep', ['30'], { uid, gid: uid, stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    expect(processesOfUid(uid)).toContain(child.pid);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(processesOfUid(uid)).toEqual([]);
  });

  it('one merge adds at most its byte cap, and the shared folder grows no further than its own', async () => {
    const saved = process.env.BERTH_CACHE_DIR;
    const root = await mkdtemp(join(tmpdir(), 'berth-gofix-caps-'));
    dirs.push(root);
    process.env.BERTH_CACHE_DIR = root;
    try {
      const key = 'f'.repeat(64);
      const into = join(installsDir(), key, 'go-verify');
      await mkdir(into, { recursive: true });
      // Ten 1000-byte outputs of Go's layout.
      const from = join(root, 'from');
      for (let i = 0; i < 10; i++) {
        const name = `${i}${'a'.repeat(63)}-d`;
        const sub = name.slice(0, 2);
        await mkdir(join(from, sub), { recursive: true });
        await writeFile(join(from, sub, name), Buffer.alloc(1000, i));
      }
      const files = async () =>
        (await Promise.all((await readdir(into)).map((sub) => readdir(join(into, sub))))).flat();
      expect(await mergeGoCache(key, from, '1'.repeat(64), { mergeBytes: 3500 })).toBe(3);
      // 3000 bytes there, the folder's cap 5500: two more fit, whatever one merge may add.
      expect(await mergeGoCache(key, from, '2'.repeat(64), { mergeBytes: 1e6, folderBytes: 5500 })).toBe(2);
      expect(await mergeGoCache(key, from, '3'.repeat(64), { mergeBytes: 1e6, folderBytes: 5500 })).toBe(0);
      expect((await files()).length).toBe(5);
    } finally {
      if (saved === undefined) delete process.env.BERTH_CACHE_DIR;
      else process.env.BERTH_CACHE_DIR = saved;
    }
  });
});
