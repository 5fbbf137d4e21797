/** berth's cache folder on the host, shared by every cache (JVM helper, installed agents). */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** berth's cache root: `BERTH_CACHE_DIR`, else `$XDG_CACHE_HOME/berth`, else `~/.cache/berth`. */
export function cacheRoot(): string {
  if (process.env.BERTH_CACHE_DIR) return process.env.BERTH_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'berth');
}
