import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes a file atomically: the content goes to a temporary file in the same
 * folder, which is then renamed over the target, so a reader (or a resumed job
 * after a crash) sees either the old file or the new one, never half of it.
 * Parent folders are created. A link at `path` is replaced, never written through; for
 * folders that untrusted code can write use src/util/safe-fs.ts (`writeFileBeneath`), which
 * also refuses links on the way.
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    // O_EXCL: never through a link planted at the temporary name.
    await writeFile(temporary, content, { flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    // No half-written leftover (e.g. when `path` is a folder: EISDIR).
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

/** Writes `value` as pretty JSON (2-space indent, trailing newline), atomically. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}
