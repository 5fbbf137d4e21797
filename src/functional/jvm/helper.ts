/**
 * Compiles berth's JVM helper (`helper-source.ts`) with javac at first use, into a cache folder
 * keyed by the source's hash and the JDK version: `$BERTH_CACHE_DIR/jvm-helper/<hash>/`
 * (default `~/.cache/berth`), and packs it into `helper.jar` there (a class-data archive, `cds.ts`,
 * accepts only jar files on the class path). Concurrent first uses are safe: each compiles into its
 * own temporary folder and renames it into place.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PrerequisiteError } from '../../errors.ts';
import { cacheRoot } from '../../util/cache.ts';
import { HELPER_CLASS, HELPER_SOURCE } from './helper-source.ts';
import { findJdk } from './toolchain.ts';

const execFileAsync = promisify(execFile);

/** The compiled helper: its cache folder and the class path entry to start it with. */
export interface HelperBuild {
  /** `$BERTH_CACHE_DIR/jvm-helper/<hash>/`: the classes, `helper.jar`, the class-data archives. */
  dir: string;
  /** `<dir>/helper.jar`. */
  jar: string;
}

/** How the helper is built; part of the cache key (a change rebuilds it). */
const BUILD = 'javac -XDstringConcat=inline; helper.jar';

let helperCache: Promise<HelperBuild> | undefined;

/** Returns the compiled helper (compiling it the first time). */
export function ensureHelper(): Promise<HelperBuild> {
  helperCache ??= (async () => {
    const jdk = await findJdk();
    const hash = createHash('sha256')
      .update(HELPER_SOURCE)
      .update(jdk.versionLine)
      .update(BUILD)
      .digest('hex')
      .slice(0, 16);
    const dir = join(cacheRoot(), 'jvm-helper', hash);
    const build = { dir, jar: join(dir, 'helper.jar') };
    if (existsSync(build.jar)) return build;
    const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await mkdir(tmp, { recursive: true });
    try {
      const src = join(tmp, `${HELPER_CLASS}.java`);
      await writeFile(src, HELPER_SOURCE);
      try {
        // String concatenation compiled inline, not through invokedynamic: a runner JVM (one per
        // sample) then spins no method handles for the protocol's lines.
        await execFileAsync(
          jdk.javac,
          ['-nowarn', '-XDstringConcat=inline', '-encoding', 'UTF-8', '-d', join(tmp, 'classes'), src],
          { timeout: 120_000 },
        );
        await execFileAsync(
          jdk.jar,
          ['--create', '--file', join(tmp, 'helper.jar'), '-C', join(tmp, 'classes'), '.'],
          { timeout: 120_000 },
        );
      } catch (err) {
        const e = err as { stderr?: string; message: string };
        throw new PrerequisiteError(
          `could not compile berth's JVM helper with ${jdk.javac}: ${e.stderr ?? e.message}`,
        );
      }
      // Readable by the unprivileged sandbox user.
      await chmod(tmp, 0o755);
      try {
        await rename(tmp, dir);
      } catch (err) {
        if (!existsSync(build.jar)) throw err;
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return build;
  })();
  helperCache.catch(() => {
    helperCache = undefined;
  });
  return helperCache;
}
