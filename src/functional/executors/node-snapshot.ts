/**
 * A node start-up snapshot with a package already loaded (lodash, which every MBJSP test requires),
 * for JavaScript samples run in warm workers (process.ts). Each sample is still its own `node`
 * process, started with `--snapshot-blob` (Node.js's user-land start-up snapshots, v20's
 * `--build-snapshot`): the heap it starts from holds lodash as `require("lodash")` would have
 * made it, so the sample does not read, compile and run lodash's 540 kB again. The snapshot is
 * deserialized into a fresh isolate per process, so one sample's changes to lodash never reach
 * another; `require("lodash")` resolves as without it (NODE_PATH) and returns the preloaded
 * module only when it resolves to the very file the snapshot was built from.
 *
 * The snapshot is built by berth (trusted code only: the entry below and the package's own file)
 * once per batch, in a folder of its own outside every sandbox's writable paths, and shown to the
 * sandbox read-only. What differs for a sample from `node main.js`: `process.execArgv` holds
 * `--snapshot-blob <file>`, and a stack trace 10 frames deep ends in the entry's file instead of
 * `node:internal/main/run_main_module`. Measured in docs/function-level.md#speed.
 * `BERTH_NODE_SNAPSHOT=0` turns it off.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sampleRoot } from '../sandbox.ts';

const run = promisify(execFile);

/** Where the snapshot's folder appears inside a bwrap sandbox (the host's is under /tmp, which the sandbox's own /tmp hides). */
export const SNAPSHOT_DIR_INSIDE = '/berth-node-snapshot';

/** PATH of the sandbox's commands (functional/sandbox.ts): the snapshot is built by the `node` the samples run. */
const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The snapshot's entry, run once by `node --build-snapshot`: it loads the package as the CommonJS
 * loader would (same wrapper parameters, same file name in stack traces) and, when a sample's
 * process starts from the snapshot, puts it in the module cache under its real path and runs the
 * sample's file as the main module (`node file` does the same: Module.runMain with argv[1]).
 */
const ENTRY_BODY = `'use strict';
const file = fs.realpathSync(process.env.BERTH_PRELOAD);
const source = fs.readFileSync(file, 'utf8');
const preloaded = { exports: {}, require, id: file, filename: file, loaded: false };
vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file })
  .call(preloaded.exports, preloaded.exports, require, preloaded, file, path.dirname(file));
const exported = preloaded.exports;
v8.startupSnapshot.setDeserializeMainFunction(() => {
  const Module = require('module');
  const cached = new Module(file, null);
  cached.filename = file;
  cached.paths = Module._nodeModulePaths(path.dirname(file));
  cached.exports = exported;
  cached.loaded = true;
  Module._cache[file] = cached;
  if (process.argv[1] === undefined) return;
  process.argv[1] = path.resolve(process.argv[1]);
  Module.runMain();
});
`;

/** The entry file: the body compiled under the name it has inside the sandbox (stack traces show no host path). */
const ENTRY = `'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const v8 = require('v8');
vm.compileFunction(${JSON.stringify(ENTRY_BODY)}, ['require', 'fs', 'path', 'vm', 'v8'], {
  filename: ${JSON.stringify(`${SNAPSHOT_DIR_INSIDE}/entry.js`)},
})(require, fs, path, vm, v8);
`;

/** A built snapshot: its folder on the host and the blob's path inside the sandbox. */
export interface NodeSnapshot {
  /** Host folder holding the blob (remove with `removeNodeSnapshot`). */
  dir: string;
  /** The blob as a sample's node sees it. */
  blobInside: string;
  /** The preloaded package's name (`require(name)`). */
  name: string;
  /** Real path of its main file. */
  preloaded: string;
}

/** Whether snapshots are wanted (`BERTH_NODE_SNAPSHOT=0` turns them off). */
export function snapshotsEnabled(): boolean {
  return process.env.BERTH_NODE_SNAPSHOT !== '0';
}

/**
 * Builds a snapshot with package `name`, whose main file is `file` (CommonJS), preloaded; undefined when this
 * node cannot (the samples then run plain `node`). Seconds: ~0.3 of one core.
 */
export async function buildNodeSnapshot(name: string, file: string): Promise<NodeSnapshot | undefined> {
  const root = sampleRoot();
  await mkdir(root, { recursive: true, mode: 0o711 });
  const dir = await mkdtemp(join(root, 'node-snapshot-'));
  try {
    const preloaded = await realpath(file);
    const entry = join(dir, 'entry.js');
    await writeFile(entry, ENTRY, { mode: 0o644 });
    await run('node', ['--snapshot-blob', join(dir, 'preload.blob'), '--build-snapshot', entry], {
      cwd: dir,
      env: { PATH: SANDBOX_PATH, BERTH_PRELOAD: preloaded },
      timeout: 60_000,
      maxBuffer: 1 << 20,
    });
    // Read by the slots' uids inside the sandbox; written by nobody but berth.
    await chmod(join(dir, 'preload.blob'), 0o644);
    await chmod(dir, 0o755);
    return { dir, blobInside: join(SNAPSHOT_DIR_INSIDE, 'preload.blob'), name, preloaded };
  } catch {
    await removeNodeSnapshot({ dir });
    return undefined;
  }
}

export async function removeNodeSnapshot(snapshot: Pick<NodeSnapshot, 'dir'>): Promise<void> {
  await rm(snapshot.dir, { recursive: true, force: true });
}

/** `argv` (`node file ...`) started from the snapshot. */
export function withSnapshot(argv: readonly string[], snapshot: NodeSnapshot): string[] {
  const [node, ...rest] = argv;
  return [node as string, '--snapshot-blob', snapshot.blobInside, ...rest];
}

/** What the probe prints when the snapshot works. */
export const PROBE_OK = 'berth-node-snapshot-ok';

/**
 * A program that prints PROBE_OK only when it started from the snapshot and `require` of the
 * package hands it the preloaded module: run once per batch in a worker before any sample uses it.
 */
export function probeProgram(snapshot: NodeSnapshot): string {
  const name = JSON.stringify(snapshot.name);
  return [
    `const file = require.resolve(${name});`,
    'const cached = require.cache[file];',
    `const ok = cached !== undefined && file === ${JSON.stringify(snapshot.preloaded)} &&`,
    `  require(${name}) === cached.exports && process.execArgv.includes('--snapshot-blob');`,
    `if (ok) process.stdout.write(${JSON.stringify(PROBE_OK)});`,
  ].join('\n');
}
