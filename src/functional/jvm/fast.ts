/**
 * The fast JVM path: many samples per compiler call in a warm compiler JVM, each sample in its own
 * package; then each sample's `main` in a fresh runner JVM of its own (started ahead, sandboxed,
 * from a class-data archive), with its own time limit. A sample whose code breaks a batch is found
 * from the compiler's per-file messages (or by bisection when a message names no file) and only
 * that sample fails. The JVM that compiles never runs sample code; no JVM runs two samples.
 *
 * Verdicts are meant to equal those of the reference path (`reference.ts`, mxeval's commands).
 */
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import PQueue from 'p-queue';
import { MAX_SLOTS, slotIdentity } from '../../sandbox/identity.ts';
import { SandboxProcess } from '../../sandbox/process.ts';
import { ownedTempDir } from '../../util/leftovers.ts';
import {
  archiveOptions,
  COMPILER_JVM_OPTIONS,
  ensureArchives,
  type JvmArchives,
  RUNNER_JVM_OPTIONS,
  runnerClasspath,
  runnerPreload,
} from './cds.ts';
import { splitDiagnostics } from './diagnostics.ts';
import { ensureHelper, type HelperBuild } from './helper.ts';
import { HELPER_CLASS } from './helper-source.ts';
import { DEFAULTS, type JvmRunOptions, type JvmSample, type JvmVerdict } from './jvm-types.ts';
import {
  assembleProgram,
  type JvmLanguage,
  mainClassName,
  packageProgram,
  sourceFileName,
} from './program.ts';
import {
  JvmServer,
  jvmLimits,
  resolveSandbox,
  type SandboxKind,
  ServerLost,
  sandboxedJvm,
} from './server.ts';
import { findJdk, findKotlin, type JdkInfo, type KotlinInfo } from './toolchain.ts';

interface Unit {
  /** Index in the unique-program list; also names the package `s<index>`. */
  index: number;
  language: JvmLanguage;
  assertions: boolean;
  program: string;
  keys: string[];
}

type CompileOutcome =
  | { ok: true; pkg: string }
  | { ok: false; status: 'compile_error' | 'timed_out'; message: string };

const decode = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');
const fromB64 = decode;

function defaultWorkers(): number {
  return Math.max(1, Math.min(2, cpus().length));
}

/** `BERTH_JVM_DEBUG=1`: one line per compiler call and per sample run, on stderr, stamped from the module's load. */
const loaded = performance.now();
function debug(line: string) {
  console.error(`[berth jvm +${((performance.now() - loaded) / 1000).toFixed(2)} s] ${line}`);
}

/** Recycle the compiler JVM after this many calls. */
const COMPILER_RECYCLE = 60;

export async function runFast(
  samples: readonly JvmSample[],
  options: JvmRunOptions = {},
): Promise<JvmVerdict[]> {
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULTS.timeoutSeconds;
  const compileTimeout = options.compileTimeoutSeconds ?? DEFAULTS.compileTimeoutSeconds;
  const batchSize = Math.max(1, options.batchSize ?? DEFAULTS.batchSize);
  const cap = options.outputCapBytes ?? DEFAULTS.outputCapBytes;
  const workers = Math.max(1, options.workers ?? defaultWorkers());
  const memoryMiB = options.memoryMiB ?? DEFAULTS.memoryMiB;

  const jdk = await findJdk();
  const kotlin = samples.some((s) => s.language === 'kotlin') ? await findKotlin() : undefined;
  const helper = await ensureHelper();
  const archives = await ensureArchives(jdk, kotlin, helper);
  const { kind: sandbox, warning: sandboxWarning } = resolveSandbox(options.sandbox);

  // Identical programs (same language and -ea) run once.
  const units: Unit[] = [];
  const byProgram = new Map<string, Unit>();
  for (const s of samples) {
    const program = assembleProgram(s.prompt, s.completion, s.test);
    const assertions = options.assertions ?? true;
    const id = `${s.language}\0${assertions}\0${program}`;
    let u = byProgram.get(id);
    if (!u) {
      u = { index: units.length, language: s.language, assertions, program, keys: [] };
      units.push(u);
      byProgram.set(id, u);
    }
    u.keys.push(s.key);
  }

  const root = await ownedTempDir('berth-jvm-');
  await chmod(root, 0o755);
  const verdicts = new Map<string, JvmVerdict>();
  const emit = (u: Unit, v: Omit<JvmVerdict, 'key' | 'sandbox'>) => {
    for (const key of u.keys) {
      const full: JvmVerdict = { key, sandbox, ...(sandboxWarning ? { warning: sandboxWarning } : {}), ...v };
      verdicts.set(key, full);
      options.onVerdict?.(full);
    }
  };

  // Compilation dominates: one warm compiler JVM per worker, each taking whole batches.
  const compilerCount = Math.max(1, options.compilers ?? workers);
  const compilers = Array.from(
    { length: compilerCount },
    () => new CompilerHandle(jdk, kotlin, helper, archives, root),
  );
  const idleCompilers = [...compilers];
  const runners = new RunnerPools({ jdk, kotlin, helper, archives, root, sandbox, workers, memoryMiB });
  const compileQueue = new PQueue({ concurrency: compilerCount });
  const runQueue = new PQueue({ concurrency: workers });
  // An error that no answer could cause (a runner JVM that cannot start) stops the run.
  let fatal: unknown;
  try {
    const batches: Unit[][] = [];
    for (const lang of ['kotlin', 'java'] as const) {
      const mine = units.filter((u) => u.language === lang);
      // Spread small inputs over every compiler.
      const size = Math.max(1, Math.min(batchSize, Math.ceil(mine.length / compilerCount)));
      for (let i = 0; i < mine.length; i += size) batches.push(mine.slice(i, i + size));
    }
    batches.forEach((batch, batchNo) => {
      void compileQueue.add(async () => {
        if (fatal !== undefined) return;
        const dir = join(root, `b${batchNo}`);
        const compiler = idleCompilers.pop()!;
        let outcomes: Map<Unit, CompileOutcome>;
        try {
          outcomes = await compileBatch(compiler, batch, root, dir, compileTimeout);
        } catch (err) {
          fatal ??= err;
          return;
        } finally {
          idleCompilers.push(compiler);
        }
        const classesDir = join(dir, 'classes');
        let left = 0;
        const done = () => {
          left--;
          if (left === 0) void rm(dir, { recursive: true, force: true });
        };
        for (const u of batch) {
          const o = outcomes.get(u);
          if (!o?.ok) {
            emit(u, {
              status: o?.status ?? 'compile_error',
              message: o?.message ?? 'not compiled',
              stdout: '',
              exitCode: null,
              timeMs: null,
            });
            continue;
          }
          left++;
          void runQueue.add(async () => {
            try {
              if (fatal === undefined) emit(u, await runners.run(u, classesDir, o.pkg, cap, timeoutSeconds));
            } catch (err) {
              fatal ??= err;
            } finally {
              done();
            }
          });
        }
        if (left === 0) void rm(dir, { recursive: true, force: true });
      });
    });
    await compileQueue.onIdle();
    await runQueue.onIdle();
    if (fatal !== undefined) throw fatal;
  } finally {
    await Promise.all(compilers.map((c) => c.stop()));
    await runners.stop();
    if (process.env.BERTH_JVM_DEBUG) {
      const cpu = process.cpuUsage();
      debug(
        `CPU: compiler JVMs ${compilers.reduce((a, c) => a + c.cpu, 0).toFixed(2)} s, berth's own process ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s`,
      );
    }
    await rm(root, { recursive: true, force: true });
  }
  return samples.map((s) => verdicts.get(s.key)!);
}

class CompilerHandle {
  private server: JvmServer | undefined;
  private seq = 0;

  constructor(
    private readonly jdk: JdkInfo,
    private readonly kotlin: KotlinInfo | undefined,
    private readonly helper: HelperBuild,
    private readonly archives: JvmArchives,
    private readonly root: string,
  ) {}

  private get(): JvmServer {
    if (this.server?.alive && this.server.served < COMPILER_RECYCLE) return this.server;
    this.cpu += this.server?.cpuSeconds() || 0;
    void this.server?.stop();
    const argv = [
      this.jdk.java,
      ...COMPILER_JVM_OPTIONS,
      ...archiveOptions(this.archives.compile),
      '-Djava.awt.headless=true',
      '-cp',
      this.helper.jar,
      HELPER_CLASS,
      'compile',
      this.kotlin?.home ?? '-',
    ];
    // The compile server is trusted (it compiles, runs nothing of the samples): a plain process.
    this.server = new JvmServer({
      launch: () => new SandboxProcess(argv, { cwd: this.root, env: process.env }),
    });
    return this.server;
  }

  /** Compiles files; returns exit code and messages. Throws ServerLost. */
  async compile(language: JvmLanguage, outDir: string, files: string[], timeoutSeconds: number) {
    const server = this.get();
    const t0 = performance.now();
    const f = await server.request(
      [language === 'kotlin' ? 'KC' : 'JC', String(this.seq++), outDir, '', ...files],
      timeoutSeconds,
    );
    if (process.env.BERTH_JVM_DEBUG) {
      debug(
        `compiled ${files.length} ${language} file(s) in ${((performance.now() - t0) / 1000).toFixed(2)} s, exit ${f[2]}`,
      );
    }
    return { code: Number(f[2]), messages: decode(f[3]) };
  }

  /** CPU seconds of every compiler JVM this handle started (debug figures). */
  cpu = 0;

  async stop() {
    this.cpu += this.server?.cpuSeconds() || 0;
    await this.server?.stop();
  }
}

async function compileBatch(
  compiler: CompilerHandle,
  batch: Unit[],
  root: string,
  dir: string,
  compileTimeout: number,
): Promise<Map<Unit, CompileOutcome>> {
  const out = new Map<Unit, CompileOutcome>();
  const fileOf = new Map<Unit, string>();
  const pkgOf = new Map<Unit, string>();
  const classesDir = join(dir, 'classes');
  await mkdir(classesDir, { recursive: true });
  for (const u of batch) {
    const pkgDir = join(dir, 'src', `s${u.index}`);
    await mkdir(pkgDir, { recursive: true });
    const packaged = packageProgram(u.language, u.program, `s${u.index}`);
    const file = join(pkgDir, sourceFileName(u.language));
    await writeFile(file, packaged.source);
    // Relative to the compiler's working folder (the root): compilers print paths as given (javac)
    // or relative to it (kotlinc), so messages name files exactly as passed.
    fileOf.set(u, relative(root, file));
    pkgOf.set(u, packaged.pkg);
  }
  await chmod(dir, 0o755);
  const language = batch[0]?.language ?? 'kotlin';
  const clean = (u: Unit, text: string) =>
    text.split(`${relative(root, join(dir, 'src', `s${u.index}`))}/`).join('');

  const attempt = async (units: Unit[]): Promise<void> => {
    if (units.length === 0) return;
    const files = units.map((u) => fileOf.get(u)!);
    let res: { code: number; messages: string };
    try {
      res = await compiler.compile(language, classesDir, files, compileTimeout + units.length);
    } catch (err) {
      if (!(err instanceof ServerLost)) throw err;
      if (units.length === 1) {
        const u = units[0]!;
        out.set(u, {
          ok: false,
          status: err.reason === 'timeout' ? 'timed_out' : 'compile_error',
          message:
            err.reason === 'timeout'
              ? `timed out: compilation took longer than ${compileTimeout} seconds`
              : `the compiler crashed: ${err.message}`,
        });
        return;
      }
      const half = Math.ceil(units.length / 2);
      await attempt(units.slice(0, half));
      await attempt(units.slice(half));
      return;
    }
    const split = splitDiagnostics(res.messages, files);
    if (res.code === 0) {
      for (const u of units) out.set(u, { ok: true, pkg: pkgOf.get(u)! });
      return;
    }
    const bad = units.filter((u) => split.filesWithErrors.has(fileOf.get(u)!));
    if (bad.length > 0) {
      for (const u of bad) {
        out.set(u, {
          ok: false,
          status: 'compile_error',
          message: clean(u, split.byFile.get(fileOf.get(u)!) ?? ''),
        });
      }
      await attempt(units.filter((u) => !bad.includes(u)));
      return;
    }
    if (units.length === 1) {
      const u = units[0]!;
      out.set(u, { ok: false, status: 'compile_error', message: clean(u, res.messages) });
      return;
    }
    const half = Math.ceil(units.length / 2);
    await attempt(units.slice(0, half));
    await attempt(units.slice(half));
  };
  await attempt(batch);
  return out;
}

interface PoolConfig {
  jdk: JdkInfo;
  kotlin: KotlinInfo | undefined;
  helper: HelperBuild;
  archives: JvmArchives;
  root: string;
  sandbox: SandboxKind;
  workers: number;
  memoryMiB: number;
}

/**
 * Runner JVMs: each runs exactly one sample and is then killed with its sandbox and scratch
 * folder, so nothing a sample changes in its JVM (JDK statics, security properties, files in its
 * folder, threads) can reach another sample. Up to `workers` spares per `-ea` setting are started
 * ahead, so a sample waits for a JVM only when the machine is busier than its workers.
 */
class RunnerPools {
  private readonly spares = new Map<boolean, JvmServer[]>();
  private readonly all = new Set<JvmServer>();
  private readonly scratchOf = new Map<JvmServer, string>();
  private readonly slotOf = new Map<JvmServer, number>();
  /** Function-level slots (the lower half of the uid block, identity.ts) not held by a live runner. */
  private readonly freeSlots = Array.from({ length: MAX_SLOTS / 2 }, (_, i) => i);
  private readonly slotWaiters: ((slot: number) => void)[] = [];
  private seq = 0;

  constructor(private readonly cfg: PoolConfig) {}

  /**
   * A new runner on a slot of its own (its uid, `slotIdentity`: no two live runners share one, so
   * none can read another's scratch folder); undefined when `wait` is false and no slot is free.
   */
  private async make(assertions: boolean, wait: boolean): Promise<JvmServer | undefined> {
    const slot = await this.takeSlot(wait);
    if (slot === undefined) return undefined;
    const identity = slotIdentity(slot);
    const scratch = join(this.cfg.root, `scratch-${randomBytes(4).toString('hex')}`);
    // Only the runner's uid may enter it (the root above is 0755, other runners see it read-only).
    await mkdir(scratch, { mode: 0o700 });
    if (identity) await chown(scratch, identity.uid, identity.gid);
    const javaArgs = [
      ...(assertions ? ['-ea'] : []),
      `-Xmx${this.cfg.memoryMiB}m`,
      ...RUNNER_JVM_OPTIONS,
      ...archiveOptions(this.cfg.archives.run),
      '-Djava.security.manager=allow',
      `-Djava.io.tmpdir=${scratch}`,
      '-cp',
      runnerClasspath(this.cfg.helper, this.cfg.kotlin),
      HELPER_CLASS,
      'run',
      ...runnerPreload(this.cfg.kotlin),
    ];
    const server = new JvmServer({
      launch: () =>
        sandboxedJvm(this.cfg.sandbox, this.cfg.jdk.java, javaArgs, {
          scratch,
          readOnly: [this.cfg.root, this.cfg.helper.dir, ...(this.cfg.kotlin ? [this.cfg.kotlin.home] : [])],
          limits: jvmLimits(this.cfg.memoryMiB),
          ...(identity ? { identity } : {}),
        }),
    });
    this.all.add(server);
    this.scratchOf.set(server, scratch);
    this.slotOf.set(server, slot);
    return server;
  }

  /** A free slot; when none is and `wait`, an idle spare is retired and its slot awaited. */
  private takeSlot(wait: boolean): Promise<number | undefined> {
    const free = this.freeSlots.shift();
    if (free !== undefined || !wait) return Promise.resolve(free);
    for (const list of this.spares.values()) {
      const spare = list.shift();
      if (spare) {
        this.retire(spare);
        break;
      }
    }
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private giveSlot(slot: number) {
    const waiter = this.slotWaiters.shift();
    if (waiter) waiter(slot);
    else this.freeSlots.push(slot);
  }

  /** A started (or starting) runner that has run nothing; tops the spares up again. */
  private async acquire(assertions: boolean): Promise<JvmServer> {
    const list = this.spares.get(assertions) ?? [];
    this.spares.set(assertions, list);
    let server: JvmServer | undefined;
    while (list.length > 0 && !server) {
      const s = list.shift()!;
      if (s.alive) server = s;
      else this.retire(s);
    }
    server ??= (await this.make(assertions, true))!;
    while (list.length < this.cfg.workers) {
      const spare = await this.make(assertions, false);
      if (!spare) break;
      // A spare that cannot start fails the sample that takes it (run() awaits start() again).
      spare.start().catch(() => undefined);
      list.push(spare);
    }
    return server;
  }

  /** Kills the runner's process group and removes its scratch folder. */
  private retire(s: JvmServer) {
    this.all.delete(s);
    const scratch = this.scratchOf.get(s);
    const slot = this.slotOf.get(s);
    this.scratchOf.delete(s);
    this.slotOf.delete(s);
    s.kill();
    // The slot (its uid) is free again once nothing of the runner is left: process and files.
    void s
      .exited()
      .then(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined))
      .catch(() => undefined)
      .then(() => {
        if (slot !== undefined) this.giveSlot(slot);
      });
  }

  async run(u: Unit, classesDir: string, pkg: string, cap: number, timeoutSeconds: number) {
    const t0 = performance.now();
    const server = await this.acquire(u.assertions);
    try {
      await server.start();
    } catch (err) {
      // A runner that cannot start is an error of the run, not a verdict.
      this.retire(server);
      throw err;
    }
    const ready = performance.now();
    try {
      const f = await server.request(
        ['RUN', String(this.seq++), classesDir, pkg, mainClassName(u.language), String(cap)],
        timeoutSeconds,
      );
      const exitCode = Number(f[2]);
      const stderr = fromB64(f[5]);
      this.retire(server);
      if (process.env.BERTH_JVM_DEBUG) {
        const t = (performance.now() - t0) / 1000;
        debug(
          `ran ${pkg}: runner started in ${server.startSeconds?.toFixed(3)} s, waited for it ${((ready - t0) / 1000).toFixed(3)} s, main ${f[3]} ms, answered ${((performance.now() - ready) / 1000).toFixed(3)} s after, ${t.toFixed(3)} s in all`,
        );
      }
      return {
        status: exitCode === 0 ? ('passed' as const) : ('failed' as const),
        message: stderr,
        stdout: fromB64(f[4]),
        exitCode,
        timeMs: Number(f[3]),
      };
    } catch (err) {
      this.retire(server);
      if (!(err instanceof ServerLost)) throw err;
      if (err.reason === 'timeout') {
        return {
          status: 'timed_out' as const,
          message: `timed out after ${timeoutSeconds} seconds`,
          stdout: '',
          exitCode: null,
          timeMs: null,
        };
      }
      return { status: 'crashed' as const, message: err.message, stdout: '', exitCode: null, timeMs: null };
    }
  }

  async stop() {
    await Promise.all([...this.all].map((s) => s.stop()));
    this.all.clear();
  }
}
