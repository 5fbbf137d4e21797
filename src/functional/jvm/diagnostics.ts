/**
 * Splits the messages of one compiler call over many files into per-file parts, so that a sample
 * whose code breaks a batch is told apart from its neighbours.
 *
 * kotlinc: `<path>:<line>:<col>: error: <text>` followed by the source line and a caret line;
 * messages without a location start with `error:`, `warning:`, `info:`, `exception:`.
 * javac: `<path>:<line>: error: <text>` followed by source and caret lines, then `N errors`.
 */

export interface SplitDiagnostics {
  /** Message text per file path (as given to the compiler), in order of appearance. */
  byFile: Map<string, string>;
  /** Files with at least one error. */
  filesWithErrors: Set<string>;
  /** Error text that names no file (a compiler crash, a bad option...). */
  unattributedErrors: string;
}

const LOCATED = /^(.+?\.(?:kt|java)):(\d+)(?::(\d+))?: (error|warning|info|note|logging|exception|warn)\b/;
const UNLOCATED = /^(error|warning|info|exception|note|warn|logging): /;
const COUNT = /^\d+ (errors?|warnings?)$/;

export function splitDiagnostics(text: string, files: readonly string[]): SplitDiagnostics {
  const known = new Set(files);
  const byFile = new Map<string, string>();
  const filesWithErrors = new Set<string>();
  let unattributed = '';
  let current: { file: string | undefined; error: boolean } = { file: undefined, error: false };
  for (const line of text.split('\n')) {
    const m = LOCATED.exec(line);
    if (m?.[1] && known.has(m[1])) {
      const severity = m[4];
      current = { file: m[1], error: severity === 'error' || severity === 'exception' };
      if (current.error) filesWithErrors.add(m[1]);
    } else {
      const u = UNLOCATED.exec(line);
      if (u) current = { file: undefined, error: u[1] === 'error' || u[1] === 'exception' };
      else if (COUNT.test(line.trim())) continue;
    }
    if (current.file !== undefined) {
      byFile.set(current.file, `${byFile.get(current.file) ?? ''}${line}\n`);
    } else if (current.error) {
      unattributed += `${line}\n`;
    }
  }
  return { byFile, filesWithErrors, unattributedErrors: unattributed };
}
