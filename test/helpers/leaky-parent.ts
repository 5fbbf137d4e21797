/**
 * A real `berth eval` (or any berth command) started the way a careless wrapper script or CI
 * runner may start it: from bash, with descriptors 100 and 1000 left open on `file` across exec
 * (bash's redirections do not set close-on-exec). Tests then check no sample sees them.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

/** Runs `node bin/berth.js ...args` in `cwd` with descriptors 100 and 1000 open on `file`. */
export function berthWithLeakedFds(
  file: string,
  args: readonly string[],
  cwd: string,
): SpawnSyncReturns<string> {
  return spawnSync(
    'bash',
    [
      '-c',
      `exec 100<"$1" 1000<"$1"; shift; exec "$@"`,
      'berth-parent',
      file,
      process.execPath,
      join(root, 'bin', 'berth.js'),
      ...args,
    ],
    { encoding: 'utf8', cwd, timeout: 300_000 },
  );
}
