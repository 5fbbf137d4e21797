/**
 * A long-lived helper JVM (compile server or runner) spoken to over a line protocol
 * (see `helper-source.ts`). One request at a time; a request that exceeds its time limit kills the
 * whole process group, and the caller starts a new server.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import { createInterface } from 'node:readline';
import { startCommand } from '../../sandbox/command.ts';
import type { SandboxIdentity } from '../../sandbox/identity.ts';
import { closeInheritedFds, minimalViewPrefix, systemFoldersShow } from '../../sandbox/isolation.ts';
import type { SandboxProcess } from '../../sandbox/process.ts';
import { withoutSecrets } from '../../sandbox/secrets.ts';
import { detectSandbox } from '../sandbox.ts';
import type { SandboxKind } from '../types.ts';

/** Why a request got no answer. */
export class ServerLost extends Error {
  constructor(
    readonly reason: 'timeout' | 'died',
    message: string,
  ) {
    super(message);
  }
}

export interface ServerSpec {
  /** Starts the JVM (sandboxed with `sandboxedJvm`, or a plain `SandboxProcess`). */
  launch: () => SandboxProcess;
  /** Seconds to wait for READY. */
  startTimeoutSeconds?: number;
}

const STDERR_TAIL = 8192;
/** Linux's USER_HZ, the unit of `/proc/<pid>/stat`'s times (100 on every architecture Linux ships). */
const CLOCK_TICKS = 100;

export class JvmServer {
  private proc: SandboxProcess | undefined;
  private pending: { resolve: (f: string[]) => void; reject: (e: Error) => void } | undefined;
  private ready: Promise<void> | undefined;
  private stderrTail = '';
  private dead = false;
  /** True when the runner could not install its security manager (JDK 24+). */
  unguarded = false;
  /** Requests answered so far. */
  served = 0;
  /** Seconds from launch to READY (undefined until ready). */
  startSeconds: number | undefined;

  constructor(private readonly spec: ServerSpec) {}

  get alive(): boolean {
    return this.proc !== undefined && !this.dead;
  }

  /** Starts the JVM and waits for its READY line. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    const launched = performance.now();
    const proc = this.spec.launch();
    this.proc = proc;
    const child = proc.child;
    let onReady: (() => void) | undefined;
    let onFail: ((e: Error) => void) | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onFail = reject;
    });
    const timer = setTimeout(
      () => {
        onFail?.(
          new ServerLost(
            'timeout',
            `JVM helper did not start within ${this.spec.startTimeoutSeconds ?? 120} s`,
          ),
        );
        this.kill();
      },
      (this.spec.startTimeoutSeconds ?? 120) * 1000,
    );
    child.stderr?.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-STDERR_TAIL);
    });
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (line.startsWith('READY')) {
        this.unguarded = line.includes('unguarded');
        clearTimeout(timer);
        this.startSeconds = (performance.now() - launched) / 1000;
        onReady?.();
        return;
      }
      if (!line.startsWith('R\t')) return;
      const p = this.pending;
      this.pending = undefined;
      this.served++;
      p?.resolve(line.split('\t'));
    });
    void proc.closed.then(() => {
      this.dead = true;
      void proc.release();
      clearTimeout(timer);
      const err = new ServerLost('died', `JVM helper exited: ${this.stderrTail.trim().slice(-2000)}`);
      onFail?.(err);
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    });
    return this.ready;
  }

  /**
   * Sends one request (tab-joined fields, no tabs or newlines inside) and waits for its answer.
   * @throws ServerLost on timeout (the server is killed) or when the JVM dies.
   */
  async request(fields: string[], timeoutSeconds: number): Promise<string[]> {
    await this.start();
    if (this.dead || !this.proc) throw new ServerLost('died', 'JVM helper is not running');
    if (this.pending) throw new Error('JvmServer: one request at a time');
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.kill();
        reject(new ServerLost('timeout', `no answer within ${timeoutSeconds} s`));
      }, timeoutSeconds * 1000);
      this.pending = {
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.proc!.child.stdin!.write(`${fields.join('\t')}\n`);
    });
  }

  /**
   * CPU seconds (user + system, all threads) the JVM used so far, from `/proc/<pid>/stat`; NaN
   * when it cannot be read (not started, gone, not Linux). Only meaningful for a JVM started
   * directly (a compiler), not through a sandbox's wrappers.
   */
  cpuSeconds(): number {
    const pid = this.proc?.child.pid;
    if (pid === undefined) return Number.NaN;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15 (clock ticks).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
    } catch {
      return Number.NaN;
    }
  }

  /** Kills the whole process group (SIGKILL). */
  kill(): void {
    this.dead = true;
    this.proc?.kill();
  }

  /** Settles when the JVM has exited (at once when it never started). */
  async exited(): Promise<void> {
    await this.proc?.closed;
  }

  /** Closes stdin and waits briefly, then kills. */
  async stop(): Promise<void> {
    if (!this.proc || this.dead) return;
    this.proc.child.stdin?.end();
    const t = setTimeout(() => this.kill(), 2000);
    await this.proc.closed;
    clearTimeout(t);
    this.kill();
  }
}

export type { SandboxKind };

/**
 * The isolation for the runner JVMs: the functional module's detection (bwrap, else unshare, else
 * none with a warning), `preferred` forcing a kind. `BERTH_SANDBOX=none` turns it off.
 */
export function resolveSandbox(preferred: 'auto' | SandboxKind = 'auto'): {
  kind: SandboxKind;
  warning?: string;
} {
  if (process.env.BERTH_SANDBOX === 'none') return detectSandbox('none');
  return detectSandbox(preferred === 'docker' ? 'auto' : preferred);
}

/** Limits of one JVM runner (a sample at a time; the JVM itself needs a few dozen threads). */
export interface JvmLimits {
  memoryBytes: number;
  processes: number;
  fileBytes: number;
}

/**
 * The limits of a runner JVM with a heap of `heapMiB`: memory twice the heap (metaspace, code
 * cache, thread stacks), 256 processes and threads, files up to 64 MiB.
 */
export function jvmLimits(heapMiB: number): JvmLimits {
  return { memoryBytes: 2 * heapMiB * 1024 * 1024, processes: 256, fileBytes: 64 * 1024 * 1024 };
}

/**
 * The JDK of a `java` command, for the sandbox: the command by its real path (a link, e.g.
 * `/usr/bin/java` through `/etc/alternatives` or a `JAVA_HOME` through a `current` link, may lie
 * outside what the sandbox shows) and, unless the system folders show it, the JDK folder it is in
 * (`bin/..`: `/opt/jdk-21`, `~/.sdkman/candidates/java/21-tem`), to show read-only.
 */
export function jdkOf(command: string): { command: string; home?: string } {
  if (!isAbsolute(command)) return { command };
  let real: string;
  try {
    real = realpathSync(command);
  } catch {
    return { command };
  }
  const home = dirname(dirname(real));
  return { command: real, ...(systemFoldersShow(home) ? {} : { home }) };
}

/**
 * Starts a JVM with no descriptor but stdio inherited, without network, as an unprivileged user,
 * within `limits` (src/sandbox/command.ts), in the minimal view (src/sandbox/isolation.ts): of the
 * host only `/usr`, `/etc`, the JDK (`jdkOf`) and `readOnly` are visible, read-only, `scratch`
 * writable, `/tmp` private (no `/work`, `/home`, `/root`, `/var`: a sample reads no dataset, no
 * other sample's answers, no key file of the host; until session 10 the runners saw the whole
 * host read-only). `none` runs it with the limits only; `unshare` shares the host's file system.
 *
 * `identity` (a slot's uid, `slotIdentity`; set when berth is root): under bwrap the JVM runs as
 * that host uid (bwrap without a user namespace, `setpriv` inside), so it reads only what any user
 * may and what it writes is that uid's. Without one (berth is not root) bwrap's user namespace maps
 * the sandbox's uid 65534 to berth's own unprivileged uid.
 */
export function sandboxedJvm(
  kind: SandboxKind,
  command: string,
  args: readonly string[],
  opts: {
    scratch: string;
    readOnly: readonly string[];
    limits: JvmLimits;
    env?: Record<string, string>;
    identity?: SandboxIdentity;
  },
): SandboxProcess {
  const sandboxed = kind === 'bwrap' || kind === 'unshare';
  const jdk = sandboxed ? jdkOf(command) : { command };
  // Descriptors berth's own parent leaked without close-on-exec are closed before the sandbox.
  const prefix = [
    ...closeInheritedFds(),
    ...(sandboxed
      ? minimalViewPrefix(kind, {
          readOnly: [...opts.readOnly, ...(jdk.home ? [jdk.home] : [])],
          writable: opts.scratch,
          ...(kind === 'bwrap' && opts.identity
            ? { privileged: { dropTo: opts.identity } }
            : { mapTo: { uid: 65534, gid: 65534 } }),
        })
      : []),
  ];
  return startCommand({
    argv: [jdk.command, ...args],
    prefix,
    cwd: opts.scratch,
    env: { ...withoutSecrets(), ...opts.env },
    limits: { ...opts.limits },
  }).proc;
}
