/**
 * Arms berth's runner probes around one test command and reads back what they wrote: the
 * pytest plugin (pytest-probe.ts) and the node:test reporter (node-probe.ts).
 *
 * Each run gets a random folder with `code/` (the probe modules, under random names, so a
 * configuration cannot switch them off by name) and `out/` (the secret `nonce`, which a probe
 * reads and deletes when it starts, then `started` and its report). Local environments: a host
 * folder bound into the sandbox (code read-only, out writable) and read back with no-follow
 * opens; other environments (containers): a folder under /tmp made by a shell script berth runs
 * before the tests and read back, base64-framed, by one after.
 *
 * The test command gets `BERTH_PROBE_OUT`, the code folder first on `PYTHONPATH` and
 * `-p <probe>` added to `PYTEST_ADDOPTS` (commands that run pytest through tox are left alone:
 * tox passes neither variable on); a `node --test` command that names its reporters gets the
 * node reporter (node-probe.ts).
 */
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { constants, rmSync } from 'node:fs';
import { chmod, lstat, mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment, ExecOptions } from '../../environments/environment.ts';
import { ownedTempDir } from '../../util/leftovers.ts';
import { shellQuote } from '../../util/shell.ts';
import { nodeGuardSource } from './node-guard.ts';
import { addNodeGuard, addNodeProbe, NODE_PROBE_SOURCE } from './node-probe.ts';
import { PYTEST_PROBE_SOURCE } from './pytest-probe.ts';

/** Largest probe file berth reads back, in bytes (a bigger one is refused as not the probe's). */
const MAX_PROBE_FILE_BYTES = 32 * 1024 * 1024;

/** What berth armed for one test run. */
export interface ArmedProbes {
  /** The secret the probes must echo back. */
  nonce: string;
  /**
   * berth's X25519 private key for this run: the node guard in each test file's process agrees
   * its record key with the public half (node-guard.ts). Never leaves berth.
   */
  guardKey?: KeyObject;
  /** The test command as the task gives it (before berth's additions). */
  testCommand: string;
  /** The test command to run (exports, and the node reporter where it applies). */
  command: string;
  /** Whether the pytest plugin was given (PYTEST_ADDOPTS), the node reporter (command line). */
  pytest: boolean;
  node: boolean;
  /** Why a probe was not given, for the record. */
  notes: string[];
  /** Host folders the command must see (local environments). */
  binds: NonNullable<ExecOptions['binds']>;
  /** Shell lines that create the probe folder in the environment (containers), run before the tests. */
  setupScript: string;
  /** Shell lines that print the probes' files (framed by `frame`) and remove the folder, run after. */
  collectScript: string;
  /** Marker that frames each file in the collect script's output. */
  frame: string;
  /**
   * The probe modules' paths in a container (a container's root could rewrite them for the test
   * processes that start later: berth fingerprints them before and after the tests); none for
   * local environments, whose code folder is bound read-only.
   */
  codeFiles: string[];
  /** Host folder of a local environment's probe files (removed by `disarm`). */
  hostDir?: string;
  outDir: string;
}

/** The files a probe wrote, as read back (undefined: absent or refused). */
export interface ProbeFiles {
  pytestStarted?: string;
  pytestReport?: string;
  nodeStarted?: string;
  nodeReport?: string;
}

/** True when the command runs its tests through tox, which passes neither PYTEST_ADDOPTS nor PYTHONPATH on. */
function throughTox(command: string): boolean {
  return /(^|[\s;&|(/])tox(\s|$)/.test(command);
}

/**
 * Prepares the probes for one test command in `env`. Nothing runs yet: a local environment gets
 * its host folder now; a container gets `setupScript` to run (trusted) before the tests.
 */
export async function armProbes(env: Environment, command: string): Promise<ArmedProbes> {
  const nonce = randomBytes(16).toString('hex');
  const hex = randomBytes(6).toString('hex');
  const moduleName = `berth_probe_${hex}`;
  const reporterName = `berth-node-probe-${hex}.mjs`;
  const guardName = `berth-node-guard-${hex}.cjs`;
  const frame = `@@berth-probe-${randomBytes(8).toString('hex')}@@`;
  const notes: string[] = [];
  const keys = generateKeyPairSync('x25519');
  const guardSource = nodeGuardSource(
    keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  );

  let base: string;
  let hostDir: string | undefined;
  const binds: { path: string; writable?: boolean }[] = [];
  let setupScript = '';
  if (env.kind === 'local') {
    // Named after this process and recorded as its leftover (src/util/leftovers.ts), so the next
    // `berth run` or `berth clean` removes it when this process is killed (kill -9) mid-verifier.
    hostDir = await ownedTempDir(`berth-probe-p${process.pid}-`);
    liveDirs.add(hostDir);
    base = hostDir;
    await mkdir(join(base, 'code'));
    await mkdir(join(base, 'out'));
    await writeFile(join(base, 'code', `${moduleName}.py`), PYTEST_PROBE_SOURCE);
    await writeFile(join(base, 'code', reporterName), NODE_PROBE_SOURCE);
    await writeFile(join(base, 'code', guardName), guardSource);
    await writeFile(join(base, 'out', 'nonce'), nonce, { mode: 0o644 });
    await chmod(join(base, 'out'), 0o777);
    binds.push({ path: join(base, 'code') }, { path: join(base, 'out'), writable: true });
  } else {
    base = `/tmp/.berth-probe-${hex}`;
    const eof = `BERTH_PROBE_EOF_${randomBytes(8).toString('hex')}`;
    setupScript = [
      `rm -rf ${base} && mkdir -p ${base}/code ${base}/out && chmod 755 ${base} ${base}/code && chmod 777 ${base}/out`,
      `cat > ${base}/code/${moduleName}.py <<'${eof}'`,
      PYTEST_PROBE_SOURCE,
      eof,
      `cat > ${base}/code/${reporterName} <<'${eof}'`,
      NODE_PROBE_SOURCE,
      eof,
      `cat > ${base}/code/${guardName} <<'${eof}'`,
      guardSource,
      eof,
      `printf %s ${nonce} > ${base}/out/nonce && chmod 644 ${base}/out/nonce`,
    ].join('\n');
  }
  const out = `${base}/out`;
  const code = `${base}/code`;

  let run = addNodeGuard(command, `${code}/${guardName}`) ?? command;
  let node = false;
  // The probe writes out/node-report.jsonl itself (node-probe.ts): node's stream gets nothing.
  const planned = addNodeProbe(run, `${code}/${reporterName}`, '/dev/null');
  if (planned) {
    run = planned.command;
    node = true;
  } else if (/(^|[\s;&|(/])node\s/.test(command) && /\s--test(\s|$)/.test(command)) {
    notes.push(
      'node --test names no --test-reporter: the node:test probe was not given (console and exit code only)',
    );
  }
  const pytest = !throughTox(command);
  if (!pytest)
    notes.push('the tests run through tox, which passes no PYTEST_ADDOPTS: the pytest probe was not given');
  const exports = [`export BERTH_PROBE_OUT=${shellQuote(out)}`];
  if (pytest)
    exports.push(
      `export PYTHONPATH=${shellQuote(code)}\${PYTHONPATH:+:$PYTHONPATH}`,
      `export PYTEST_ADDOPTS="\${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }-p ${moduleName}"`,
    );
  const collect = [
    'pytest-started:started',
    'pytest-report:report.json',
    'node-started:node-started',
    'node-report:node-report.jsonl',
  ];
  const collectScript = [
    ...collect.map((entry) => {
      const [label, file] = entry.split(':') as [string, string];
      const path = `${out}/${file}`;
      return `printf '%s %s\\n' '${frame}' '${label}'; if [ -f ${path} ] && [ ! -L ${path} ]; then head -c ${MAX_PROBE_FILE_BYTES} ${path} | base64 | tr -d '\\n'; fi; echo`;
    }),
    `printf '%s end\\n' '${frame}'`,
    `rm -rf ${base}`,
  ].join('\n');
  return {
    nonce,
    guardKey: keys.privateKey,
    testCommand: command,
    command: `${exports.join('\n')}\n${run}`,
    pytest,
    node,
    notes,
    binds,
    setupScript,
    collectScript: env.kind === 'local' ? '' : collectScript,
    frame,
    codeFiles:
      env.kind === 'local' ? [] : [`${moduleName}.py`, reporterName, guardName].map((f) => `${code}/${f}`),
    ...(hostDir ? { hostDir } : {}),
    outDir: out,
  };
}

/**
 * The probes' files: read with no-follow from a local environment's host folder, or parsed from
 * the output of `collectScript` (containers). Files that are links, not regular, or too big are
 * left out (as if absent).
 */
export async function readProbeFiles(armed: ArmedProbes, collected?: string): Promise<ProbeFiles> {
  const files: ProbeFiles = {};
  const labels: Record<string, keyof ProbeFiles> = {
    'pytest-started': 'pytestStarted',
    'pytest-report': 'pytestReport',
    'node-started': 'nodeStarted',
    'node-report': 'nodeReport',
  };
  if (armed.hostDir) {
    const names: Record<keyof ProbeFiles, string> = {
      pytestStarted: 'started',
      pytestReport: 'report.json',
      nodeStarted: 'node-started',
      nodeReport: 'node-report.jsonl',
    };
    // Read side by side (each read is a few calls on libuv's thread pool).
    const entries = Object.entries(names) as [keyof ProbeFiles, string][];
    const texts = await Promise.all(entries.map(([, name]) => readNoFollow(join(armed.outDir, name))));
    entries.forEach(([key], i) => {
      const text = texts[i];
      if (text !== undefined) files[key] = text;
    });
    return files;
  }
  if (collected === undefined) return files;
  const lines = collected.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.startsWith(`${armed.frame} `)) continue;
    const key = labels[line.slice(armed.frame.length + 1)];
    const body = lines[i + 1];
    if (key && body !== undefined && body !== '' && !body.startsWith(armed.frame))
      files[key] = Buffer.from(body, 'base64').toString('utf8');
  }
  return files;
}

/** A regular file's text, never through a link; undefined when absent, a link, not regular or too big. */
async function readNoFollow(path: string): Promise<string | undefined> {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > MAX_PROBE_FILE_BYTES) return undefined;
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** Host probe folders not yet removed; removed at the latest when this process exits (a signal, `process.exit`). */
const liveDirs = new Set<string>();
process.on('exit', () => {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

/** Removes a local environment's probe folder (containers: the collect script did). */
export async function disarmProbes(armed: ArmedProbes): Promise<void> {
  if (!armed.hostDir) return;
  liveDirs.delete(armed.hostDir);
  // The tests may have left links or odd modes behind: remove without following anything.
  try {
    await lstat(armed.hostDir);
  } catch {
    return;
  }
  await rm(armed.hostDir, { recursive: true, force: true, maxRetries: 3 });
}
