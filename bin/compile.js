// Compiles berth's TypeScript sources once into a cache and says where the compiled entry
// point is, so that a checkout (`npm ci`, then `npx berth` or `node bin/berth.js`) runs plain
// JavaScript instead of transforming every module on every start.
//
// The cache is `node_modules/.cache/berth-build/<key>/` (BERTH_BUILD_DIR overrides the parent),
// where <key> hashes the path, size and modification time of every source file: an edit makes
// a new key, hence a fresh build on the next start (about a second), and every later start
// only stats the sources (a few milliseconds) and loads the compiled modules. Each source file
// compiles to one module at the same relative path (`src/cli/main.ts` -> `<key>/cli/main.js`,
// relative imports rewritten from `.ts` to `.js`, packages left to Node); the other files under
// src/ (HTML assets, prices.json) are copied beside them. A build is written to a temporary
// folder and renamed into place, under a lock file so that concurrent first starts build once.
// When nothing can be built (no esbuild, an unwritable cache) the caller falls back to tsx.
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A lock older than this (milliseconds) is taken over: its builder died. */
const STALE_LOCK_MS = 120_000;
/** Builds older than this (milliseconds) are removed once a newer one exists. */
const PRUNE_AFTER_MS = 24 * 3600_000;

const isTest = (name) => name.endsWith('.test.ts');

/**
 * Every file under `dir` (paths relative to it, `/`-separated), test files excluded. Paths are
 * joined by hand: this runs on every start, before anything is warm.
 */
function sourceFiles(dir, prefix = '', out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const name = entry.name;
    if (entry.isDirectory()) sourceFiles(`${dir}/${name}`, `${prefix}${name}/`, out);
    else if (entry.isFile() && !isTest(name)) out.push(prefix + name);
  }
  return out;
}

/**
 * The cache key of the sources: their paths, sizes and modification times, and this compiler,
 * hashed with two 32-bit FNV-1a variants (a cache folder's name, not a security check: loading
 * node:crypto for it cost more than the rest of the check).
 */
function sourceKey(src, files) {
  let text = `${readFileSync(new URL(import.meta.url), 'utf8')}\0${src}\n`;
  for (const file of files) {
    const stat = statSync(`${src}/${file}`);
    text += `${file}\0${stat.size}\0${stat.mtimeMs}\n`;
  }
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}${files.length.toString(16)}`;
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the build lock of `key` (true), or false when a live builder holds it. */
function takeLock(lock) {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      try {
        const owner = Number(readFileSync(lock, 'utf8')) || 0;
        const age = Date.now() - statSync(lock).mtimeMs;
        if ((owner > 0 && processAlive(owner) && age < STALE_LOCK_MS) || (owner === 0 && age < 5000))
          return false;
        rmSync(lock, { force: true });
      } catch {
        // Removed meanwhile: try again.
      }
    }
  }
  return false;
}

/** Compiles `files` (relative to `src`) into `out`. */
async function build(src, files, out) {
  const { build: esbuild } = await import('esbuild');
  const rewrite = {
    name: 'berth-relative-imports',
    setup(b) {
      // Every relative import of a source file stays an import of its own compiled module (no
      // bundling); a JSON import (prices.json) is inlined.
      b.onResolve({ filter: /^\.\.?\/.*\.ts$/ }, (args) =>
        args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
      );
    },
  };
  const sources = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  await esbuild({
    absWorkingDir: src,
    entryPoints: sources,
    outdir: out,
    outbase: '.',
    bundle: true,
    packages: 'external',
    plugins: [rewrite],
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'silent',
  });
  for (const file of files) {
    if (file.endsWith('.ts')) continue;
    cpSync(join(src, file), join(out, file));
  }
}

/** Removes builds other than `keep` that are older than a day (never the two newest). */
function prune(cache, keep) {
  const builds = readdirSync(cache, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== keep)
    .map((e) => {
      const path = join(cache, e.name);
      try {
        return { path, time: statSync(path).mtimeMs, temp: e.name.includes('.tmp-') };
      } catch {
        return undefined;
      }
    })
    .filter(Boolean)
    .sort((a, b) => b.time - a.time);
  const now = Date.now();
  for (const [index, b] of builds.entries()) {
    if (now - b.time < PRUNE_AFTER_MS) continue;
    if (!b.temp && index < 1) continue;
    rmSync(b.path, { recursive: true, force: true });
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The compiled entry point of the checkout at `root` (built first when the sources changed),
 * or undefined when it cannot be built here (the caller then runs the sources through tsx).
 * @param {string} root the package folder (holds `src/`)
 * @returns {Promise<string | undefined>} the absolute path of the compiled `cli/main.js`
 */
export async function compiledEntry(root) {
  const src = join(root, 'src');
  const files = sourceFiles(src);
  const key = sourceKey(src, files);
  const cache = process.env.BERTH_BUILD_DIR || join(root, 'node_modules', '.cache', 'berth-build');
  const dir = join(cache, key);
  const entry = join(dir, 'cli', 'main.js');
  if (existsSync(entry)) return entry;
  try {
    mkdirSync(cache, { recursive: true });
    const lock = join(cache, `${key}.lock`);
    const deadline = Date.now() + STALE_LOCK_MS;
    while (!takeLock(lock)) {
      // Another start is building the same sources: wait for its result.
      if (existsSync(entry)) return entry;
      if (Date.now() > deadline) return undefined;
      await sleep(50);
    }
    try {
      if (existsSync(entry)) return entry;
      const temp = `${dir}.tmp-${process.pid}`;
      rmSync(temp, { recursive: true, force: true });
      try {
        await build(src, files, temp);
        // A build folder outside the checkout (BERTH_BUILD_DIR) resolves packages through a link
        // to the checkout's node_modules: Node looks for them beside and above the importing file.
        // src/util/package-root.ts finds the checkout through the linked package.json the same way.
        const modules = join(root, 'node_modules');
        if (!temp.startsWith(`${modules}/`)) {
          symlinkSync(modules, join(temp, 'node_modules'), 'dir');
          symlinkSync(join(root, 'package.json'), join(temp, 'package.json'));
        }
        renameSync(temp, dir);
      } finally {
        rmSync(temp, { recursive: true, force: true });
      }
      prune(cache, key);
    } finally {
      rmSync(lock, { force: true });
    }
    return existsSync(entry) ? entry : undefined;
  } catch (error) {
    if (process.env.BERTH_BUILD_DEBUG) process.stderr.write(`berth: compiling the sources failed: ${error}\n`);
    return undefined;
  }
}

// `node bin/compile.js` (npm's `prepare`, after `npm ci`): build now, so the first start is fast too.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (existsSync(join(root, 'src')) && !(await compiledEntry(root)))
    process.stderr.write('berth: could not compile the sources; berth will run them through tsx\n');
}
