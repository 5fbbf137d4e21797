/**
 * Compiles berth's JVM helper (`helper-source.ts`) with javac at first use, into a cache folder
 * keyed by the source's hash and the JDK version: `$BERTH_CACHE_DIR/jvm-helper/<hash>/`
 * (default `~/.cache/berth`). Concurrent first uses are safe: each compiles into its own temporary
 * folder and renames it into place.
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

let helperCache: Promise<string> | undefined;

/** Returns the folder holding the compiled helper class (compiling it the first time). */
export function ensureHelper(): Promise<string> {
  helperCache ??= (async () => {
    const jdk = await findJdk();
    const hash = createHash('sha256')
      .update(HELPER_SOURCE)
      .update(jdk.versionLine)
      .digest('hex')
      .slice(0, 16);
    const dir = join(cacheRoot(), 'jvm-helper', hash);
    if (existsSync(join(dir, `${HELPER_CLASS}.class`))) return dir;
    const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await mkdir(tmp, { recursive: true });
    try {
      const src = join(tmp, `${HELPER_CLASS}.java`);
      await writeFile(src, HELPER_SOURCE);
      try {
        await execFileAsync(jdk.javac, ['-nowarn', '-encoding', 'UTF-8', '-d', tmp, src], {
          timeout: 120_000,
        });
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
        if (!existsSync(join(dir, `${HELPER_CLASS}.class`))) throw err;
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return dir;
  })();
  helperCache.catch(() => {
    helperCache = undefined;
  });
  return helperCache;
}
