/**
 * Host preparation of an installed agent: its npm package and dependencies for one
 * platform (`npm install --ignore-scripts --os linux --cpu <arch> --libc <libc>`: no
 * package's script ever runs on the host), the registry's Node runtime when the agent is a
 * Node program, and a launcher `bin/<command>` that runs the platform's program where it
 * lies (what the packages' install scripts would copy into place). The result is a
 * self-contained, relocatable folder, cached on the host per (agent, version, platform)
 * under `$BERTH_CACHE_DIR/agents/` (default `~/.cache/berth/agents/`): later jobs need no
 * registry. Environments bring it in read-only (a Docker image layer, or a bind in the
 * local sandbox; see src/environments/).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type { Platform } from '../../environments/environment.ts';
import { cacheRoot } from '../../util/cache.ts';
import { shellQuote } from '../../util/shell.ts';
import { type AgentPackage, NODE_RUNTIME_VERSION, platformKey } from './packages.ts';

/** The manifest berth writes into every prepared folder. */
export interface PreparedManifest {
  agent: string;
  package: string;
  version: string;
  platform: Platform;
  /** Version of the bundled Node runtime, or null for native binaries. */
  node: string | null;
  /** The launcher, relative to the folder. */
  launcher: string;
  prepared_at: string;
}

/** An agent could not be prepared on the host (registry unreachable, no build for the platform...). */
export class AgentPrepareError extends Error {
  override name = 'AgentPrepareError';
  constructor(
    message: string,
    /** The preparation's log lines. */
    readonly log: string[] = [],
  ) {
    super(message);
  }
}

/** Where prepared agents live: `$BERTH_CACHE_DIR/agents` (default `~/.cache/berth/agents`). */
export function agentCacheDir(): string {
  return join(cacheRoot(), 'agents');
}

/** The cached folder of one agent version for one platform. */
export function preparedDir(pkg: AgentPackage, version: string, platform: Platform): string {
  return join(agentCacheDir(), `${pkg.name}-${version}-${platformKey(platform)}`);
}

const EXACT = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/**
 * The exact version to install: the default when none is asked, an exact version as given,
 * else what the registry resolves a tag or range to (`latest`, `^2`).
 * @throws AgentPrepareError when a tag or range cannot be resolved (no registry)
 */
export async function resolveAgentVersion(pkg: AgentPackage, wanted?: string): Promise<string> {
  if (wanted === undefined || wanted === '') return pkg.defaultVersion;
  if (EXACT.test(wanted)) return wanted;
  try {
    const { stdout } = await execa('npm', ['pack', '--dry-run', '--json', `${pkg.package}@${wanted}`], {
      timeout: 120_000,
      env: { npm_config_ignore_scripts: 'true' },
    });
    const version = (JSON.parse(stdout) as Array<{ version?: string }>)[0]?.version;
    if (typeof version === 'string' && EXACT.test(version)) return version;
    throw new Error(`npm answered no version (${stdout.slice(0, 200)})`);
  } catch (error) {
    throw new AgentPrepareError(
      `cannot resolve ${pkg.package}@${wanted} to a version: ${(error as Error).message.split('\n')[0]}; pass an exact --agent-version`,
    );
  }
}

/** The launcher script: runs the platform's program of the prepared folder, wherever the folder is. */
export function launcherScript(pkg: AgentPackage, version: string, platform: Platform): string {
  const entry = pkg.entry(platform);
  const lines = [
    '#!/bin/sh',
    `# berth: ${pkg.package}@${version} for ${platformKey(platform)}`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion
    'd="${0%/*}/.."',
  ];
  if (entry.pathDirs?.length)
    lines.push(`PATH="${entry.pathDirs.map((dir) => `$d/${dir}`).join(':')}:$PATH"; export PATH`);
  for (const [name, value] of Object.entries(entry.env ?? {}))
    lines.push(`${name}=${shellQuote(value)}; export ${name}`);
  lines.push(`p="$d/${entry.path}"`);
  if (entry.baseline) lines.push(`grep -qw avx2 /proc/cpuinfo 2>/dev/null || p="$d/${entry.baseline}"`);
  if (pkg.node) lines.push(`exec "$d/node_modules/node-linux-${platform.arch}/bin/node" "$p" "$@"`);
  else lines.push('exec "$p" "$@"');
  return `${lines.join('\n')}\n`;
}

/** Reads a prepared folder's manifest; undefined when the folder is missing or incomplete. */
export async function readPrepared(dir: string): Promise<PreparedManifest | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'berth-agent.json'), 'utf8')) as PreparedManifest;
  } catch {
    return undefined;
  }
}

/** Every prepared folder in the cache, with its manifest. */
export async function listPrepared(): Promise<Array<{ dir: string; manifest: PreparedManifest }>> {
  const root = agentCacheDir();
  const out: Array<{ dir: string; manifest: PreparedManifest }> = [];
  for (const name of existsSync(root) ? await readdir(root) : []) {
    const dir = join(root, name);
    const manifest = await readPrepared(dir);
    if (manifest) out.push({ dir, manifest });
  }
  return out;
}

/** A prepared folder, and whether this call prepared it (false: it was in the cache). */
export interface Prepared {
  folder: string;
  prepared: boolean;
}

const inflight = new Map<string, Promise<Prepared>>();

/**
 * Returns the prepared folder of `pkg@version` for `platform`, preparing it when the cache
 * has none. Concurrent calls share one preparation; concurrent processes each prepare into
 * their own temporary folder and the first rename wins.
 * @throws AgentPrepareError with npm's log when the package cannot be installed
 */
export function prepareAgent(
  pkg: AgentPackage,
  version: string,
  platform: Platform,
  log: (line: string) => void = () => {},
): Promise<Prepared> {
  const dir = preparedDir(pkg, version, platform);
  let p = inflight.get(dir);
  if (!p) {
    p = prepareUncached(pkg, version, platform, dir, log);
    inflight.set(dir, p);
    p.catch(() => inflight.delete(dir));
  }
  return p;
}

async function prepareUncached(
  pkg: AgentPackage,
  version: string,
  platform: Platform,
  dir: string,
  log: (line: string) => void,
): Promise<Prepared> {
  if (await readPrepared(dir)) {
    log(`using the prepared ${pkg.package}@${version} (${platformKey(platform)}) in ${dir}`);
    return { folder: dir, prepared: false };
  }
  if (!pkg.platforms.some((p) => p.arch === platform.arch && p.libc === platform.libc))
    throw new AgentPrepareError(
      `${pkg.name} does not run on ${platformKey(platform)}: ${
        pkg.node
          ? `it is a Node program and the registry's Node runtime is built for glibc only`
          : 'its package has no build for it'
      }`,
    );
  const lines: string[] = [];
  const note = (line: string): void => {
    lines.push(line);
    log(line);
  };
  await mkdir(agentCacheDir(), { recursive: true });
  const staging = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(staging, { recursive: true });
  try {
    await writeFile(
      join(staging, 'package.json'),
      `${JSON.stringify({ name: 'berth-prepared-agent', private: true }, null, 2)}\n`,
    );
    const specs = [`${pkg.package}@${version}`];
    if (pkg.node) specs.push(`node-linux-${platform.arch}@${NODE_RUNTIME_VERSION}`);
    const args = [
      'install',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--omit=dev',
      '--prefer-offline',
      '--install-strategy=hoisted',
      '--os=linux',
      `--cpu=${platform.arch}`,
      `--libc=${platform.libc}`,
      ...specs,
    ];
    note(`$ npm ${args.join(' ')}`);
    const started = performance.now();
    const run = await execa('npm', args, {
      cwd: staging,
      all: true,
      reject: false,
      timeout: 900_000,
      // No script of any package runs on the host, whatever the user's npm configuration says.
      env: { npm_config_ignore_scripts: 'true', npm_config_update_notifier: 'false' },
    });
    for (const line of (run.all ?? '').split('\n')) if (line.trim()) note(line);
    note(
      `npm exited ${run.exitCode ?? run.signal} after ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    if (run.exitCode !== 0)
      throw new AgentPrepareError(
        `npm could not install ${pkg.package}@${version} for ${platformKey(platform)} (the registry is needed once per version; see the log)`,
        lines,
      );
    const installed = JSON.parse(
      await readFile(join(staging, 'node_modules', pkg.package, 'package.json'), 'utf8'),
    ) as { version?: string };
    if (installed.version !== version)
      throw new AgentPrepareError(`npm installed ${pkg.package}@${installed.version}, not ${version}`, lines);
    const entry = pkg.entry(platform);
    for (const file of [entry.path, ...(entry.baseline ? [entry.baseline] : [])]) {
      if (!existsSync(join(staging, file)))
        throw new AgentPrepareError(
          `${pkg.package}@${version} has no ${file} for ${platformKey(platform)} (its optional platform package was not installed)`,
          lines,
        );
    }
    if (pkg.node && !existsSync(join(staging, 'node_modules', `node-linux-${platform.arch}`, 'bin', 'node')))
      throw new AgentPrepareError(`the Node runtime node-linux-${platform.arch} was not installed`, lines);
    await mkdir(join(staging, 'bin'));
    const launcher = join(staging, 'bin', pkg.command);
    await writeFile(launcher, launcherScript(pkg, version, platform));
    const manifest: PreparedManifest = {
      agent: pkg.name,
      package: pkg.package,
      version,
      platform,
      node: pkg.node ? NODE_RUNTIME_VERSION : null,
      launcher: `bin/${pkg.command}`,
      prepared_at: new Date().toISOString(),
    };
    await writeFile(join(staging, 'install.log'), `${lines.join('\n')}\n`);
    // Readable and, where executable, runnable by every user (the task's agent user is not root).
    await execa('chmod', ['-R', 'a+rX,go-w', staging]);
    await chmod(launcher, 0o755);
    // The manifest last: a folder without one is incomplete and never used.
    await writeFile(join(staging, 'berth-agent.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    try {
      await rename(staging, dir);
    } catch (error) {
      // Another process prepared it first: use theirs.
      if (!(await readPrepared(dir))) throw error;
      await rm(staging, { recursive: true, force: true });
    }
    note(`prepared ${pkg.package}@${version} (${platformKey(platform)}) in ${dir}`);
    return { folder: dir, prepared: true };
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (error instanceof AgentPrepareError) throw error;
    throw new AgentPrepareError(`preparing ${pkg.package}@${version}: ${(error as Error).message}`, lines);
  }
}
