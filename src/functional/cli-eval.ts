/** The action of `berth eval` (kept out of the command file so start-up stays fast). */
import { realpathSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UsageError } from '../errors.ts';
import { defaultJobName } from '../jobs/names.ts';
import { MAX_SLOTS } from '../sandbox/identity.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { MAX_TIMER_SEC } from '../util/with-timeout.ts';
import { runEvalJob } from './eval-job.ts';
import { agentSamples } from './evaluate.ts';
import { readProblems, resultsPath } from './formats.ts';
import { parseKs } from './pass-at-k.ts';
import { prepareSandbox } from './sandbox.ts';
import type { SandboxOptions } from './types.ts';

export interface EvalCommandOptions {
  problems: string;
  samples?: string;
  agent?: 'oracle' | 'nop';
  out?: string;
  passAt?: string;
  timeout: string;
  workers: string;
  memoryMb: string;
  diskMb?: string;
  sandbox: SandboxOptions['kind'];
  env?: 'local' | 'docker';
  image: string;
  reference?: boolean;
  json?: boolean;
  /** Folder of job folders (the job's events.jsonl, config.json, result.json). */
  jobsDir?: string;
  jobName?: string;
}

function positive(name: string, text: string, integer: boolean): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name}: expected a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
}

/** Longest --timeout: what a Node timer holds, less the executors' grace periods. */
const MAX_EVAL_TIMEOUT_SEC = MAX_TIMER_SEC - 60;

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * Refuses outputs that would overwrite an input (same real path) or that are folders, before
 * anything is run or written.
 */
function checkOutputs(
  inputs: { flag: string; path: string }[],
  outputs: { flag: string; path: string }[],
): void {
  for (const output of outputs) {
    const real = realOrResolved(output.path);
    let isDir = false;
    try {
      isDir = statSync(real).isDirectory();
    } catch {
      /* not there yet */
    }
    if (isDir) throw new UsageError(`${output.flag}: ${output.path} is a folder; give a file name`);
    for (const input of inputs) {
      if (real === realOrResolved(input.path))
        throw new UsageError(
          `${output.flag}: ${output.path} is the ${input.flag} file; writing it would overwrite the input`,
        );
    }
  }
}

export async function runEvalCommand(options: EvalCommandOptions): Promise<void> {
  // Ctrl-C is taken from the start (reading the files, probing the sandbox, judging samples):
  // the run stops cleanly, keeping the verdicts finished so far, instead of dying mid-way.
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    await evalCommand(options, controller.signal);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

async function evalCommand(options: EvalCommandOptions, signal: AbortSignal): Promise<void> {
  const timeoutSec = positive('--timeout', options.timeout, false);
  if (timeoutSec > MAX_EVAL_TIMEOUT_SEC)
    throw new UsageError(
      `--timeout: at most ${MAX_EVAL_TIMEOUT_SEC} s (what a timer can hold), got "${options.timeout}"`,
    );
  const workers = positive('--workers', options.workers, true);
  if (workers > MAX_SLOTS) throw new UsageError(`--workers: at most ${MAX_SLOTS}`);
  const memoryBytes = positive('--memory-mb', options.memoryMb, true) * 1024 * 1024;
  const diskBytes = positive('--disk-mb', options.diskMb ?? '256', true) * 1024 * 1024;
  const ks = options.passAt !== undefined ? parseKs(options.passAt) : undefined;
  const inputs = [{ flag: '--problems', path: options.problems }];
  if (options.samples) inputs.push({ flag: '--samples', path: options.samples });
  const plannedSamples =
    options.samples ??
    options.out ??
    join(
      'jobs',
      `eval-${options.agent}-${basename(options.problems).replace(/\.(jsonl|json)(\.gz)?$/, '')}.jsonl`,
    );
  checkOutputs(inputs, [
    ...(options.agent ? [{ flag: options.out ? '--out' : 'the samples file', path: plannedSamples }] : []),
    { flag: 'the results file', path: resultsPath(plannedSamples) },
    { flag: 'the summary file', path: `${plannedSamples}_berth.json` },
  ]);
  // The sandbox is probed (a process of its own) while the files are read.
  const sandboxKind = options.env === 'docker' ? 'docker' : options.sandbox;
  const sandboxReady = prepareSandbox(sandboxKind).catch(() => {});
  const problems = await readProblems(options.problems);
  let samplesFile = options.samples;
  let samples: Awaited<ReturnType<typeof agentSamples>>['samples'] | undefined;
  if (options.agent) {
    const made = agentSamples(problems, options.agent);
    samples = made.samples;
    if (made.skipped.length > 0) {
      process.stderr.write(
        `${made.skipped.length} of ${problems.size} problems have no canonical solution and are not counted: ${made.skipped.slice(0, 10).join(', ')}${made.skipped.length > 10 ? ', …' : ''}\n`,
      );
    }
    if (samples.length === 0)
      throw new UsageError(`${options.problems}: no problem has a canonical solution`);
    samplesFile = plannedSamples;
    await writeFileAtomic(samplesFile, `${samples.map((sample) => JSON.stringify(sample.raw)).join('\n')}\n`);
  }
  await sandboxReady;
  const tty = process.stderr.isTTY && !process.env.CI;
  let lastDraw = 0;
  const jobName = options.jobName ?? `eval-${defaultJobName()}`;
  if (!/^[A-Za-z0-9._-]+$/.test(jobName) || jobName === '.' || jobName === '..')
    throw new UsageError(
      `--job-name may hold only letters, digits, '.', '_' and '-'; got ${JSON.stringify(jobName)}`,
    );
  const summary = await runEvalJob({
    jobsDir: options.jobsDir ?? 'jobs',
    jobName,
    config: {
      agent: options.agent ?? null,
      pass_at: options.passAt ?? null,
      timeout_sec: timeoutSec,
      workers,
      sandbox: options.env === 'docker' ? 'docker' : options.sandbox,
      reference: options.reference === true,
    },
    problemsFile: options.problems,
    samplesFile: samplesFile as string,
    problems,
    ...(samples ? { samples } : {}),
    ...(ks ? { ks } : {}),
    timeoutSec,
    workers,
    sandbox: {
      kind: options.env === 'docker' ? 'docker' : options.sandbox,
      memoryBytes,
      diskBytes,
      image: options.image,
    },
    ...(options.reference ? { reference: true } : {}),
    signal,
    onProgress: (done, total) => {
      const now = Date.now();
      if (tty && (now - lastDraw > 200 || done === total)) {
        lastDraw = now;
        process.stderr.write(`\r${done}/${total} samples checked`);
        if (done === total) process.stderr.write('\n');
      }
    },
  });
  const lines: string[] = [];
  for (const warning of summary.warnings) lines.push(`warning: ${warning}`);
  lines.push(
    `problems: ${summary.problems_file} (${summary.tasks} tasks with samples, ${summary.unattempted_tasks} without)`,
  );
  lines.push(
    `samples:  ${summary.samples_file} (${summary.samples} samples, ${summary.passed} passed) in ${summary.duration_sec.toFixed(1)}s, sandbox ${summary.sandbox}`,
  );
  const failures = Object.entries(summary.failures)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  if (failures) lines.push(`failures: ${failures}`);
  lines.push(`results:  ${summary.results_file}`);
  lines.push(`job:      ${summary.job_dir}`);
  for (const [k, value] of Object.entries(summary.pass_at_k))
    lines.push(`${k}: ${(value * 100).toFixed(2)}%`);
  // As `berth run --json`: the JSON document alone on stdout, the human lines on stderr.
  if (options.json) {
    process.stderr.write(`${lines.join('\n')}\n`);
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } else process.stdout.write(`${lines.join('\n')}\n`);
}
