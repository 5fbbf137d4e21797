/**
 * Reporters by name (`berth run --reporter NAME`, repeatable). Built in:
 * - `default`: on a terminal (and not under CI), a live progress line and the table at the
 *   end; otherwise one line per finished trial. Ends with the summary line.
 * - `ci`: one line per finished trial, whatever the terminal.
 * - `json`: the run report (docs/run-report.schema.json) on standard output at the end
 *   (`--json` is `--reporter default --reporter json`).
 * Other modules add theirs with `registerReporter` (one reporter a file).
 */
import { UsageError } from '../errors.ts';
import { buildRunReport } from './json.ts';
import type { Reporter, ReporterContext, ReporterFactory } from './reporter.ts';
import { liveRegion, textReporter } from './text.ts';

/** Reporters that own standard output (machine-readable): the others write to standard error beside them. */
const machineReadable = new Set<string>(['json']);

const factories = new Map<string, ReporterFactory>([
  [
    'default',
    (context) =>
      textReporter({
        mode: context.stdoutIsTTY && !context.ci ? 'tty' : 'lines',
        attempts: context.scope.attempts,
        write: context.stdout,
        total: context.total,
        scope: context.scope,
        live: context.stderrIsTTY && !context.quiet ? liveRegion(process.stderr) : undefined,
        ...(context.quiet ? { quiet: true } : {}),
      }),
  ],
  [
    'ci',
    (context) =>
      textReporter({
        mode: 'lines',
        attempts: context.scope.attempts,
        write: context.stdout,
        total: context.total,
        scope: context.scope,
        ...(context.quiet ? { quiet: true } : {}),
      }),
  ],
  [
    'json',
    (context): Reporter => ({
      onJobEnd({ summary, swebench }) {
        const report = buildRunReport(summary, {
          dataset: context.dataset,
          agent: context.agent,
          scope: context.scope,
          swebench,
        });
        context.stdout(`${JSON.stringify(report, null, 2)}\n`);
      },
    }),
  ],
]);

/**
 * Adds (or replaces) a reporter under `name`.
 * @param options.machineReadable the reporter writes a document to standard output; the human
 *   reporters of the same run then write to standard error.
 */
export function registerReporter(
  name: string,
  factory: ReporterFactory,
  options: { machineReadable?: boolean } = {},
): void {
  factories.set(name, factory);
  if (options.machineReadable) machineReadable.add(name);
  else machineReadable.delete(name);
}

/** The registered reporter names, sorted. */
export function reporterNames(): string[] {
  return [...factories.keys()].sort();
}

/**
 * Makes the reporters named (duplicates once each, in order). When one of them is
 * machine-readable, the others' `stdout` is standard error.
 * @throws UsageError for an unknown name (the message lists the known ones).
 */
export function createReporters(names: readonly string[], context: ReporterContext): Reporter[] {
  const unique = [...new Set(names)];
  for (const name of unique)
    if (!factories.has(name))
      throw new UsageError(
        `unknown reporter ${JSON.stringify(name)}; known reporters: ${reporterNames().join(', ')}`,
      );
  const machine = unique.some((n) => machineReadable.has(n));
  return unique.map((name) => {
    const own = machineReadable.has(name) || !machine;
    return (factories.get(name) as ReporterFactory)(
      own ? context : { ...context, stdout: context.stderr, stdoutIsTTY: context.stderrIsTTY },
    );
  });
}

/** Whether one of the reporters named writes a document to standard output (human text then goes to standard error). */
export function ownsStdout(names: readonly string[]): boolean {
  return names.some((n) => machineReadable.has(n));
}

/** One reporter that calls every hook of each of `reporters`, in order. */
export function combineReporters(reporters: readonly Reporter[]): Required<Reporter> {
  return {
    async onJobStart(event) {
      for (const r of reporters) await r.onJobStart?.(event);
    },
    onTrialStart(event) {
      for (const r of reporters) r.onTrialStart?.(event);
    },
    onEvent(event) {
      for (const r of reporters) r.onEvent?.(event);
    },
    onTrialEnd(result, event) {
      for (const r of reporters) r.onTrialEnd?.(result, event);
    },
    async onJobEnd(job, event) {
      for (const r of reporters) await r.onJobEnd?.(job, event);
    },
  };
}
