/**
 * What `berth parse` and `berth grade` share: parse several report files with
 * the registry and merge their results.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { addCount, TestCollector } from '../parsers/common.ts';
import { parseReport } from '../parsers/registry.ts';
import type { ParseResult, TestStatus } from '../parsers/types.ts';
import type { ParseOutput } from './output-schemas.ts';

export interface ParseFilesOptions {
  /** Parser name or alias; detected per file when absent. */
  format?: string;
  /** Keep every occurrence of a test (`ParseResult.elements`), for `reading`. */
  keepElements?: boolean;
  /**
   * Reads each file's parse another way before it is merged (`berth grade --rules swebench`:
   * the SWE-bench harness's reading of the same log).
   */
  reading?: (result: ParseResult, file: string) => Promise<ParseResult>;
  /**
   * Merge the tests of all files into one run (default true: the files are parts of one
   * test run, as `berth grade` reads them). When false, each file's tests are kept, tagged
   * with `report`, and the counts are the sum of the per-file counts.
   */
  merge?: boolean;
  /**
   * Called with a file that cannot be read or parsed; the file is then skipped and the
   * others are still parsed. Without it the first such error is thrown.
   */
  onFileError?: (file: string, error: unknown) => void;
}

/**
 * Parses every file (format given or detected). With `merge` (the default) the tests are
 * merged across files by the default precedence ERROR > FAILED > PASSED > SKIPPED;
 * without it, every file's tests are listed and the counts are summed.
 * @throws InputError naming the file that cannot be read or parsed.
 */
export async function parseFiles(files: string[], options: ParseFilesOptions = {}): Promise<ParseOutput> {
  const merge = options.merge ?? true;
  const collector = new TestCollector('merged');
  const separate: ParseOutput['tests'] = [];
  const warnings: string[] = [];
  const perFile: ParseOutput['files'] = [];
  const formats = new Set<string>();
  const unnamed: NonNullable<ParseOutput['unnamed']> = [];
  let truncated = false;
  for (const file of files) {
    const size = await stat(file).then(
      (info) => (info.isFile() ? info.size : undefined),
      () => undefined,
    );
    if (size === 0) {
      // Nothing to detect or parse: say so rather than "cannot tell the format" or a silent 0 tests.
      const format = options.format ?? 'none';
      perFile.push({ file, format, counts: new TestCollector(file).result().counts, truncated: false });
      warnings.push(`${file} is empty`);
      continue;
    }
    let result: ParseResult;
    try {
      result = await parseReport(
        { path: file },
        { format: options.format, sourceName: file, keepElements: options.keepElements },
      );
      if (options.reading) result = await options.reading(result, file);
    } catch (error) {
      if (!options.onFileError) throw error;
      options.onFileError(file, error);
      continue;
    }
    if (options.format !== undefined && result.tests.length === 0)
      warnings.push(`no ${result.format} test results found in ${file}`);
    formats.add(result.format);
    truncated ||= result.truncated;
    perFile.push({
      file,
      format: result.format,
      counts: result.counts,
      truncated: result.truncated,
      ...(result.countMismatch ? { countMismatch: result.countMismatch } : {}),
    });
    for (const u of result.unnamed ?? []) unnamed.push({ ...u, report: file });
    for (const w of result.warnings) warnings.push(files.length > 1 ? `${path.basename(file)}: ${w}` : w);
    if (merge) for (const test of result.tests) collector.add(test);
    else
      for (const test of result.tests)
        separate.push({ ...test, report: file } as ParseOutput['tests'][number]);
  }
  if (!merge) {
    const sum = { passed: 0, failed: 0, error: 0, skipped: 0 };
    for (const f of perFile)
      for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += f.counts[key];
    return {
      format: formats.size === 1 ? ([...formats][0] as string) : 'mixed',
      merged: false,
      counts: sum,
      tests: separate,
      ...(unnamed.length > 0 ? { unnamed } : {}),
      warnings,
      truncated,
      files: perFile,
    };
  }
  const merged = collector.result();
  // Results without an id cannot merge with anything: they add to the counts as they are.
  for (const u of unnamed) addCount(merged.counts, u.status, u.count);
  if (files.length > 1) {
    const duplicates = merged.warnings.find((w) => w.includes('duplicate'));
    if (duplicates) warnings.push(`across files: ${duplicates}`);
  }
  return {
    format: formats.size === 1 ? ([...formats][0] as string) : 'mixed',
    merged: true,
    counts: merged.counts,
    tests: merged.tests as ParseOutput['tests'],
    ...(unnamed.length > 0 ? { unnamed } : {}),
    warnings,
    truncated,
    files: perFile,
  };
}

/** Status per id of a merged output. */
export function statusMapOf(output: ParseOutput): Map<string, TestStatus> {
  return new Map(output.tests.map((t) => [t.id, t.status]));
}

const countsLine = (c: ParseOutput['counts']) =>
  `${c.passed} passed, ${c.failed} failed, ${c.error} error, ${c.skipped} skipped`;

/** The human-readable form: one line per test, then the counts per file and in total. */
export function renderParseText(output: ParseOutput, options: { quiet?: boolean } = {}): string {
  const lines: string[] = [];
  if (!options.quiet) {
    let report: unknown;
    for (const test of output.tests) {
      // Unmerged tests of several files: a header before each file's tests.
      if (!output.merged && output.files.length > 1 && test.report !== report) {
        report = test.report;
        lines.push(`== ${String(report)}`);
      }
      const note = [test.flaky ? 'flaky' : '', test.message ? String(test.message) : '']
        .filter(Boolean)
        .join('; ');
      lines.push(`${test.status.padEnd(8)} ${test.id}${note ? `  (${note.slice(0, 160)})` : ''}`);
    }
    if (output.tests.length > 0) lines.push('');
  }
  for (const f of output.files) {
    const without = (output.unnamed ?? [])
      .filter((u) => u.report === f.file)
      .reduce((n, u) => n + u.count, 0);
    lines.push(
      `${f.file}: ${f.format}, ${countsLine(f.counts)}${without > 0 ? ` (${without} of them without a test id)` : ''}${f.truncated ? ' (truncated)' : ''}`,
    );
  }
  if (output.files.length > 1)
    lines.push(
      output.merged
        ? `total (merged, one id counted once): ${output.tests.length} tests, ${countsLine(output.counts)}`
        : `total: ${output.tests.length} tests in ${output.files.length} files, ${countsLine(output.counts)}`,
    );
  for (const w of output.warnings) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
