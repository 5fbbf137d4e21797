/**
 * Victims on the host and the shell that plants links to them: what the tests of
 * issue 10 §1 use to show that no file berth writes or reads after untrusted code ran
 * follows a link that code planted (src/util/safe-fs.ts, src/trials/staging.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

/** The four link kinds the issue names. */
export const LINK_KINDS = ['file', 'folder', 'fifo', 'dangling'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/** Everything berth writes in the agent's folder of a SWE-bench trial of the `command` agent. */
export const COMMAND_AGENT_FILES = [
  'instruction.md',
  'command/command.txt',
  'command/return-code.txt',
  'command/stdout.txt',
  'command/stderr.txt',
  'exit-code.txt',
  'prediction.json',
  'patch.diff',
  'apply.log',
] as const;

export interface Victims {
  dir: string;
  /** Target of each link kind (a host path outside any job). */
  target: Record<LinkKind, string>;
  /** Asserts nothing outside was written, created or read into a fifo. */
  unchanged(): void;
  remove(): Promise<void>;
}

/** A folder outside every job with a file, a folder, a fifo and a name that must stay absent. */
export async function makeVictims(): Promise<Victims> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-victims-'));
  await chmod(dir, 0o755);
  const file = join(dir, 'victim.txt');
  await writeFile(file, 'untouched\n');
  await mkdir(join(dir, 'folder'));
  await writeFile(join(dir, 'folder', 'keep.txt'), 'keep\n');
  const fifo = join(dir, 'victim.fifo');
  spawnSync('mkfifo', [fifo]);
  const dangling = join(dir, 'never-created');
  return {
    dir,
    target: { file, folder: join(dir, 'folder'), fifo, dangling },
    unchanged() {
      expect(readFileSync(file, 'utf8')).toBe('untouched\n');
      expect(readdirSync(join(dir, 'folder'))).toEqual(['keep.txt']);
      expect(readFileSync(join(dir, 'folder', 'keep.txt'), 'utf8')).toBe('keep\n');
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      expect(existsSync(dangling)).toBe(false);
      expect(readdirSync(dir).sort()).toEqual(['folder', 'victim.fifo', 'victim.txt']);
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Shell lines that replace each of `names` (relative to the folder in the shell variable
 * `base`) by a link to a victim, the kind rotating with `rotation`, so four rotations give
 * every name every kind.
 */
export function plantLines(
  victims: Victims,
  base: string,
  names: readonly string[],
  rotation: number,
): string[] {
  return names.map((name, i) => {
    const kind = LINK_KINDS[(i + rotation) % LINK_KINDS.length] as LinkKind;
    const path = `"${base}/${name}"`;
    return `mkdir -p "$(dirname ${path})" && rm -rf ${path} && ln -s '${victims.target[kind]}' ${path}`;
  });
}

/** Names in a record that are links in the folder's copy (`not_copied` lines start with the path). */
export function notCopiedPaths(lines: readonly string[] | undefined): string[] {
  return (lines ?? []).map((l) => l.slice(0, l.indexOf(':')));
}
