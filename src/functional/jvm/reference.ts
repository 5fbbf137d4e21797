/**
 * The reference JVM path (`--reference`): one sample at a time per worker with mxeval's own
 * commands (`mxeval/execution.py`), for checking the fast path.
 *
 * - Kotlin: `<name>.kt` (a random 10-letter name, as mxeval), `kotlinc <name>.kt -include-runtime -d <name>.jar`
 *   (100 s), then `java -jar <name>.jar`.
 * - Java: `<dir>/main.java`, `javac <dir>/main.java` (100 s), then `java -cp <dir> Main`.
 *
 * berth adds what mxeval lacks: a fresh folder per sample, removed after; the run step in the
 * sandbox (no network, unprivileged, read-only file system but the folder); a whole-process-group
 * kill on timeout; an output cap; `-ea` (assertions enabled) unless `assertions: false`.
 */
import { randomBytes } from 'node:crypto';
import { chmod, chown, rm, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { MAX_SLOTS, slotIdentity } from '../../sandbox/identity.ts';
import { runToEnd, SandboxProcess } from '../../sandbox/process.ts';
import { ownedTempDir } from '../../util/leftovers.ts';
import { DEFAULTS, type JvmRunOptions, type JvmSample, type JvmVerdict } from './jvm-types.ts';
import { assembleProgram } from './program.ts';
import { jvmLimits, resolveSandbox, sandboxedJvm } from './server.ts';
import { findJdk, findKotlin } from './toolchain.ts';

export interface CommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Wall time in milliseconds. */
  ms: number;
}

/**
 * Runs a started process (its own process group, stdin closed) with a time limit (then SIGKILL to
 * the whole group) and a cap on captured output (bytes per stream).
 */
export async function runCommand(
  proc: SandboxProcess,
  opts: { timeoutSeconds: number; capBytes: number },
): Promise<CommandResult> {
  const r = await runToEnd(proc, {
    timeoutSec: opts.timeoutSeconds,
    maxOutputBytes: opts.capBytes,
    capture: 'separate',
    capEach: true,
  });
  const mark = (dropped: number) =>
    dropped > 0 ? `\n[berth: output truncated at ${opts.capBytes} bytes]` : '';
  return {
    exitCode: r.exitCode,
    stdout: r.stdout + mark(r.dropped.stdout),
    stderr: (r.spawnError ? `${r.spawnError}\n` : '') + r.stderr + mark(r.dropped.stderr),
    timedOut: r.timedOut,
    ms: r.durationSec * 1000,
  };
}

/** A plain (unsandboxed) process for the trusted compile step. */
function plain(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): SandboxProcess {
  return new SandboxProcess([command, ...args], { cwd, env: env ?? process.env, stdin: 'ignore' });
}

/** The compiler itself failed (missing, half-installed, crashed): an error of the run, never a verdict. */
export class ToolchainBroken extends Error {}

function randomName(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const bytes = randomBytes(10);
  return Array.from(bytes, (b) => letters[b % letters.length]).join('');
}

/** Runs samples one per process, as mxeval does. Verdicts in input order. */
export async function runReference(
  samples: readonly JvmSample[],
  options: JvmRunOptions = {},
): Promise<JvmVerdict[]> {
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULTS.timeoutSeconds;
  const compileTimeout = options.compileTimeoutSeconds ?? DEFAULTS.compileTimeoutSeconds;
  const cap = options.outputCapBytes ?? DEFAULTS.outputCapBytes;
  const workers = Math.min(MAX_SLOTS / 2, Math.max(1, options.workers ?? Math.min(2, cpus().length)));
  const jdk = await findJdk();
  const kotlin = samples.some((s) => s.language === 'kotlin') ? await findKotlin() : undefined;
  const { kind: sandbox, warning: sandboxWarning } = resolveSandbox(options.sandbox);
  const queue = new PQueue({ concurrency: workers });
  // One slot (uid, `slotIdentity`) per sample running at once.
  const freeSlots = Array.from({ length: workers }, (_, i) => i);
  const results = await Promise.all(
    samples.map((s) =>
      queue.add(async () => {
        const v = await runOne(s);
        options.onVerdict?.(v);
        return v;
      }),
    ),
  );
  return results as JvmVerdict[];

  async function runOne(s: JvmSample): Promise<JvmVerdict> {
    const program = assembleProgram(s.prompt, s.completion, s.test);
    const assertions = options.assertions ?? true;
    const dir = await ownedTempDir('berth-jvm-ref-');
    await chmod(dir, 0o777);
    const base: Pick<JvmVerdict, 'key' | 'sandbox' | 'warning'> = {
      key: s.key,
      sandbox,
      ...(sandboxWarning ? { warning: sandboxWarning } : {}),
    };
    try {
      let compile: CommandResult;
      let run: { command: string; args: string[] };
      const ea = assertions ? ['-ea'] : [];
      if (s.language === 'kotlin') {
        const name = randomName();
        await writeFile(join(dir, `${name}.kt`), program);
        compile = await runCommand(
          plain(
            'bash',
            [join(kotlin!.home, 'bin', 'kotlinc'), `${name}.kt`, '-include-runtime', '-d', `${name}.jar`],
            dir,
            { ...process.env, JAVACMD: jdk.java },
          ),
          { timeoutSeconds: compileTimeout, capBytes: cap },
        );
        run = { command: jdk.java, args: [...ea, '-jar', join(dir, `${name}.jar`)] };
      } else {
        await writeFile(join(dir, 'main.java'), program);
        compile = await runCommand(plain(jdk.javac, [join(dir, 'main.java')], dir), {
          timeoutSeconds: compileTimeout,
          capBytes: cap,
        });
        run = { command: jdk.java, args: [...ea, '-cp', dir, 'Main'] };
      }
      if (compile.timedOut) {
        return {
          ...base,
          status: 'timed_out',
          message: `timed out: compilation took longer than ${compileTimeout} seconds`,
          stdout: '',
          exitCode: null,
          timeMs: null,
        };
      }
      if (
        compile.exitCode === null ||
        compile.exitCode >= 126 ||
        /Could not find or load main class org\.jetbrains|No such file or directory.*kotlinc/.test(
          compile.stderr,
        )
      ) {
        // kotlinc/javac exit 1 (2: internal error) on bad code; a missing command or class is a broken toolchain, not a verdict.
        throw new ToolchainBroken(
          `the compiler failed (exit ${compile.exitCode}): ${compile.stderr.slice(0, 2000)}`,
        );
      }
      if (compile.exitCode !== 0) {
        return {
          ...base,
          status: 'compile_error',
          message: compile.stderr,
          stdout: compile.stdout,
          exitCode: null,
          timeMs: null,
        };
      }
      // The program runs as a slot's uid (berth as root), the only one that may enter its folder.
      const slot = freeSlots.shift()!;
      const identity = slotIdentity(slot);
      if (identity) await chown(dir, identity.uid, identity.gid);
      await chmod(dir, 0o700);
      const proc = sandboxedJvm(sandbox, run.command, run.args, {
        scratch: dir,
        readOnly: [],
        limits: jvmLimits(options.memoryMiB ?? DEFAULTS.memoryMiB),
        ...(identity ? { identity } : {}),
      });
      const r = await runCommand(proc, { timeoutSeconds, capBytes: cap }).finally(() => freeSlots.push(slot));
      if (r.timedOut) {
        return {
          ...base,
          status: 'timed_out',
          message: `timed out after ${timeoutSeconds} seconds`,
          stdout: r.stdout,
          exitCode: null,
          timeMs: null,
        };
      }
      return {
        ...base,
        status: r.exitCode === 0 ? 'passed' : 'failed',
        message: r.stderr,
        stdout: r.stdout,
        exitCode: r.exitCode,
        timeMs: Math.round(r.ms),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
