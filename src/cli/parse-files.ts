/**
 * What `berth parse` and `berth grade` share: parse several report files with
 * the registry and merge their results.
 */
import path from 'node:path';
import { TestCollector } from '../parsers/common.ts';
import { parseReport } from '../parsers/registry.ts';
import type { TestStatus } from '../parsers/types.ts';
import type { ParseOutput } from './output-schemas.ts';

export interface ParseFilesOptions {
  /** Parser name or alias; detected per file when absent. */
  format?: string;
  keepElements?: boolean;
}

/**
 * Parses every file (format given or detected) and merges the tests across
 * files by the default precedence ERROR > FAILED > PASSED > SKIPPED.
 * @throws InputError naming the file that cannot be read or parsed.
 */
export async function parseFiles(files: string[], options: ParseFilesOptions = {}): Promise<ParseOutput> {
  const collector = new TestCollector('merged');
  const warnings: string[] = [];
  const perFile: ParseOutput['files'] = [];
  const formats = new Set<string>();
  let truncated = false;
  for (const file of files) {
    const result = await parseReport({ path: file }, { format: options.format, sourceName: file });
    formats.add(result.format);
    truncated ||= result.truncated;
    perFile.push({ file, format: result.format, counts: result.counts, truncated: result.truncated });
    for (const w of result.warnings) warnings.push(files.length > 1 ? `${path.basename(file)}: ${w}` : w);
    for (const test of result.tests) collector.add(test);
  }
  const merged = collector.result();
  if (files.length > 1) {
    const duplicates = merged.warnings.find((w) => w.includes('duplicate'));
    if (duplicates) warnings.push(`across files: ${duplicates}`);
  }
  return {
    format: formats.size === 1 ? ([...formats][0] as string) : 'mixed',
    counts: merged.counts,
    tests: merged.tests as ParseOutput['tests'],
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
    for (const test of output.tests) {
      const note = [test.flaky ? 'flaky' : '', test.message ? String(test.message) : '']
        .filter(Boolean)
        .join('; ');
      lines.push(`${test.status.padEnd(8)} ${test.id}${note ? `  (${note.slice(0, 160)})` : ''}`);
    }
    if (output.tests.length > 0) lines.push('');
  }
  for (const f of output.files) {
    lines.push(`${f.file}: ${f.format}, ${countsLine(f.counts)}${f.truncated ? ' (truncated)' : ''}`);
  }
  if (output.files.length > 1)
    lines.push(`total: ${output.tests.length} tests, ${countsLine(output.counts)}`);
  for (const w of output.warnings) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
