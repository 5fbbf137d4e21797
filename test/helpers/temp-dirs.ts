import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary folders a test file makes and removes when it ends:
 * `const temp = tempDirs(); afterAll(temp.cleanup);` then `await temp.make('berth-x-')`.
 */
export function tempDirs(): { make(prefix: string): Promise<string>; cleanup(): Promise<void> } {
  const made: string[] = [];
  return {
    async make(prefix) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    async cleanup() {
      await Promise.all(
        made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })),
      );
    },
  };
}
