/**
 * berth's own package folder (the one holding its package.json), found upward from this
 * module: it works from the sources (`src/util/`), from `dist/util/` and from the compile
 * cache under `node_modules/.cache/berth-build/<key>/util/` (bin/compile.js), whose depth
 * below the package differs. A compile cache outside the package (`BERTH_BUILD_DIR`) holds a
 * link to the package's package.json: the package is where the link leads.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

/** The folder of berth's package.json. */
export function packageRoot(): string {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'berth') {
          found = dirname(realpathSync(manifest));
          return found;
        }
      } catch {
        // Not a readable manifest: keep looking above.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`berth's package.json not found above ${import.meta.url}`);
    dir = parent;
  }
}

/** A path inside berth's package folder (`packagePath('examples', 'swe-dockerless.jsonl')`). */
export function packagePath(...segments: string[]): string {
  return join(packageRoot(), ...segments);
}
