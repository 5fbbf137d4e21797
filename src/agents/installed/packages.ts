/**
 * What each installed coding agent is made of on the npm registry: its package, the
 * version berth was tested with, the program to start for a platform, and whether it
 * needs a Node runtime (Claude Code, Codex and opencode ship native binaries in optional
 * per-platform dependencies; Gemini CLI and Qwen Code are Node programs).
 *
 * Sources: each package's `package.json` (`bin`, `engines`, `optionalDependencies`) and
 * its install script (`install.cjs` of @anthropic-ai/claude-code, `postinstall.mjs` of
 * opencode-ai, `bin/codex.js` of @openai/codex), read on the versions below.
 */
import type { Platform } from '../../environments/environment.ts';

/** Harbor's names of the installed agents berth runs (`-a NAME`). */
export const INSTALLED_AGENT_NAMES = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'qwen-code'] as const;
export type InstalledAgentName = (typeof INSTALLED_AGENT_NAMES)[number];

/** The Node runtime berth brings for agents that are Node programs: the registry's `node-linux-<arch>` package. */
export const NODE_RUNTIME_VERSION = '22.23.5';

export interface AgentPackage {
  name: InstalledAgentName;
  /** npm package name. */
  package: string;
  /** Version installed when `--agent-version` is not given (the one berth's tests run). */
  defaultVersion: string;
  /** Name of the program (`claude`): the launcher is `bin/<command>` in the prepared folder. */
  command: string;
  /**
   * Platforms the package runs on. Node programs need the registry's Node runtime, which is
   * built for glibc only; native binaries come per platform from optional dependencies.
   */
  platforms: readonly Platform[];
  /** True when the program is a Node script run by the bundled Node runtime. */
  node: boolean;
  /**
   * The file to run for a platform, relative to the prepared folder, and extra lines of the
   * launcher script (variables) before the `exec`.
   */
  entry(platform: Platform): AgentEntry;
}

/** The program of a prepared agent, paths relative to the prepared folder. */
export interface AgentEntry {
  /** The file to run (a native binary, or a script run by the bundled Node). */
  path: string;
  /** A build for x64 CPUs without AVX2, run instead of `path` on them (opencode's `-baseline`). */
  baseline?: string;
  /** Variables the launcher sets. */
  env?: Record<string, string>;
  /** Folders the launcher puts first on PATH. */
  pathDirs?: string[];
}

const ALL: readonly Platform[] = [
  { arch: 'x64', libc: 'glibc' },
  { arch: 'arm64', libc: 'glibc' },
  { arch: 'x64', libc: 'musl' },
  { arch: 'arm64', libc: 'musl' },
];
const GLIBC: readonly Platform[] = ALL.filter((p) => p.libc === 'glibc');

/** The five agents' packages. */
export const AGENT_PACKAGES: Readonly<Record<InstalledAgentName, AgentPackage>> = {
  'claude-code': {
    name: 'claude-code',
    package: '@anthropic-ai/claude-code',
    defaultVersion: '2.1.197',
    command: 'claude',
    platforms: ALL,
    node: false,
    // install.cjs copies this binary over bin/claude.exe; berth runs it where it lies.
    entry: (p) => ({
      path: `node_modules/@anthropic-ai/claude-code-linux-${p.arch}${p.libc === 'musl' ? '-musl' : ''}/claude`,
    }),
  },
  codex: {
    name: 'codex',
    package: '@openai/codex',
    defaultVersion: '0.171.0',
    command: 'codex',
    // One static (musl) binary per architecture runs on glibc and musl alike.
    platforms: ALL,
    node: false,
    entry: (p) => {
      const triple = `${p.arch === 'x64' ? 'x86_64' : 'aarch64'}-unknown-linux-musl`;
      const vendor = `node_modules/@openai/codex-linux-${p.arch}/vendor/${triple}`;
      // What bin/codex.js does: the native binary, with the bundled ripgrep on PATH.
      return {
        path: `${vendor}/bin/codex`,
        env: { CODEX_MANAGED_BY_NPM: '1' },
        pathDirs: [`${vendor}/codex-path`],
      };
    },
  },
  'gemini-cli': {
    name: 'gemini-cli',
    package: '@google/gemini-cli',
    defaultVersion: '0.61.0',
    command: 'gemini',
    platforms: GLIBC,
    node: true,
    entry: () => ({ path: 'node_modules/@google/gemini-cli/bundle/gemini.js' }),
  },
  opencode: {
    name: 'opencode',
    package: 'opencode-ai',
    defaultVersion: '1.18.33',
    command: 'opencode',
    platforms: ALL,
    node: false,
    // postinstall.mjs picks `-baseline` builds on x64 CPUs without AVX2; berth does the same at run time.
    entry: (p) => ({
      path: `node_modules/opencode-linux-${p.arch}${p.libc === 'musl' ? '-musl' : ''}/bin/opencode`,
      ...(p.arch === 'x64'
        ? {
            baseline: `node_modules/opencode-linux-x64-baseline${p.libc === 'musl' ? '-musl' : ''}/bin/opencode`,
          }
        : {}),
    }),
  },
  'qwen-code': {
    name: 'qwen-code',
    package: '@qwen-code/qwen-code',
    defaultVersion: '0.15.10',
    command: 'qwen',
    platforms: GLIBC,
    node: true,
    entry: () => ({ path: 'node_modules/@qwen-code/qwen-code/cli.js' }),
  },
};

/** `linux-x64-glibc`. */
export function platformKey(p: Platform): string {
  return `linux-${p.arch}-${p.libc}`;
}

/** Whether `name` is one of the installed agents. */
export function isInstalledAgentName(name: string): name is InstalledAgentName {
  return (INSTALLED_AGENT_NAMES as readonly string[]).includes(name);
}
