/**
 * A long-lived helper JVM (compile server or runner) spoken to over a line protocol
 * (see `helper-source.ts`). One request at a time; a request that exceeds its time limit kills the
 * whole process group, and the caller starts a new server.
 */
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
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
  /** Command and arguments (already wrapped in a sandbox when wanted). */
  command: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  /** Seconds to wait for READY. */
  startTimeoutSeconds?: number;
}

const STDERR_TAIL = 8192;

export class JvmServer {
  private child: ResultPromise | undefined;
  private pending: { resolve: (f: string[]) => void; reject: (e: Error) => void } | undefined;
  private ready: Promise<void> | undefined;
  private stderrTail = '';
  private dead = false;
  /** True when the runner could not install its security manager (JDK 24+). */
  unguarded = false;
  /** Requests answered so far. */
  served = 0;

  constructor(private readonly spec: ServerSpec) {}

  get alive(): boolean {
    return this.child !== undefined && !this.dead;
  }

  /** Starts the JVM and waits for its READY line. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    const child = execa(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      env: this.spec.env,
      extendEnv: true,
      detached: true,
      buffer: false,
      reject: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      cleanup: true,
    });
    this.child = child;
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
        onReady?.();
        return;
      }
      if (!line.startsWith('R\t')) return;
      const p = this.pending;
      this.pending = undefined;
      this.served++;
      p?.resolve(line.split('\t'));
    });
    child.then(() => {
      this.dead = true;
      clearTimeout(timer);
      const err = new ServerLost('died', `JVM helper exited: ${this.stderrTail.trim().slice(-2000)}`);
      onFail?.(err);
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    });
    child.stdin?.on('error', () => {
      // the process died; reported through the exit above
    });
    return this.ready;
  }

  /**
   * Sends one request (tab-joined fields, no tabs or newlines inside) and waits for its answer.
   * @throws ServerLost on timeout (the server is killed) or when the JVM dies.
   */
  async request(fields: string[], timeoutSeconds: number): Promise<string[]> {
    await this.start();
    if (this.dead || !this.child) throw new ServerLost('died', 'JVM helper is not running');
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
      this.child!.stdin!.write(`${fields.join('\t')}\n`);
    });
  }

  /** Kills the whole process group (SIGKILL). */
  kill(): void {
    this.dead = true;
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        this.child?.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Closes stdin and waits briefly, then kills. */
  async stop(): Promise<void> {
    if (!this.child || this.dead) return;
    this.child.stdin?.end();
    const t = setTimeout(() => this.kill(), 2000);
    await this.child.catch(() => undefined);
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

function bwrapBase(): string[] {
  return [
    '--unshare-all',
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
  ];
}

/**
 * Wraps a command so it runs without network, as an unprivileged user, with the file system
 * read-only except `scratch` (writable) and `readOnly` (visible again after /tmp is hidden).
 */
export function wrapInSandbox(
  kind: SandboxKind,
  command: string,
  args: string[],
  opts: { scratch: string; readOnly: string[] },
): { command: string; args: string[] } {
  if (kind === 'bwrap') {
    const binds: string[] = [];
    for (const p of opts.readOnly) binds.push('--ro-bind', p, p);
    binds.push('--bind', opts.scratch, opts.scratch, '--chdir', opts.scratch);
    return { command: 'bwrap', args: [...bwrapBase(), ...binds, '--', command, ...args] };
  }
  if (kind === 'unshare') {
    return { command: 'unshare', args: ['--net', '--map-root-user', '--', command, ...args] };
  }
  return { command, args };
}
