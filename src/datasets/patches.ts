/**
 * Unified-diff helpers for dataset authoring: the files a patch touches, its
 * hunks, and the "partial" control (the patch without its last hunk).
 *
 * Patches are handled as text so git's headers (`diff --git`, `index`, modes,
 * `new file`) survive untouched; jsdiff's `parsePatch` checks that a patch
 * parses and counts its hunks.
 */
import { parsePatch } from 'diff';

/** One file section of a unified diff: its header lines and its hunks, as text. */
export interface PatchFileSection {
  /** Path before the change (`a/` stripped), or undefined for a new file. */
  oldPath?: string;
  /** Path after the change (`b/` stripped), or undefined for a deleted file. */
  newPath?: string;
  /** Header text up to the first hunk (`diff --git`, `index`, `---`, `+++`). */
  header: string;
  /** Each hunk's text, starting with its `@@` line. */
  hunks: string[];
}

const stripPrefix = (path: string): string | undefined => {
  const clean = path.trim().replace(/\t.*$/, '');
  if (clean === '/dev/null') return undefined;
  return clean.replace(/^[ab]\//, '');
};

/**
 * Splits a unified diff into file sections and hunks. Lines before the first
 * file header (a commit message, for example) are dropped. Hunk bodies are
 * delimited by the line counts in their `@@ -a,b +c,d @@` header, so content
 * lines that look like headers (`--- x` removed from a file) stay content.
 */
export function splitPatch(patch: string): PatchFileSection[] {
  const lines = patch.split(/(?<=\n)/);
  const sections: PatchFileSection[] = [];
  let current: PatchFileSection | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    if (current && (oldLeft > 0 || newLeft > 0)) {
      const hunk = current.hunks.length - 1;
      current.hunks[hunk] += line;
      if (line.startsWith('\\')) continue;
      if (line.startsWith('-')) oldLeft -= 1;
      else if (line.startsWith('+')) newLeft -= 1;
      else {
        oldLeft -= 1;
        newLeft -= 1;
      }
      continue;
    }
    if (current && current.hunks.length > 0 && line.startsWith('\\')) {
      current.hunks[current.hunks.length - 1] += line;
      continue;
    }
    const header = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (current && header) {
      oldLeft = header[1] === undefined ? 1 : Number(header[1]);
      newLeft = header[2] === undefined ? 1 : Number(header[2]);
      current.hunks.push(line);
      continue;
    }
    const gitHeader = line.startsWith('diff --git ');
    const plainHeader = line.startsWith('--- ') && lines[index + 1]?.startsWith('+++ ');
    if (gitHeader || (plainHeader && (current === undefined || current.hunks.length > 0))) {
      current = { header: '', hunks: [] };
      sections.push(current);
    }
    if (current === undefined) continue;
    if (current.hunks.length > 0) {
      // Trailing text after a file's last hunk (e.g. a signature): keep it with that hunk.
      current.hunks[current.hunks.length - 1] += line;
      continue;
    }
    current.header += line;
    if (line.startsWith('--- ')) current.oldPath = stripPrefix(line.slice(4));
    else if (line.startsWith('+++ ')) current.newPath = stripPrefix(line.slice(4));
    else if (gitHeader) {
      const match = /^diff --git a\/(.*?) b\/(.*?)\s*$/.exec(line);
      if (match) {
        current.oldPath = match[1];
        current.newPath = match[2];
      }
    } else if (line.startsWith('new file mode')) current.oldPath = undefined;
    else if (line.startsWith('deleted file mode')) current.newPath = undefined;
    else if (line.startsWith('rename from ')) current.oldPath = line.slice(12).trim();
    else if (line.startsWith('rename to ')) current.newPath = line.slice(10).trim();
  }
  return sections;
}

/** Joins sections back into a patch. */
export function joinPatch(sections: PatchFileSection[]): string {
  return sections.map((section) => section.header + section.hunks.join('')).join('');
}

/** Number of hunks in a patch, as jsdiff's `parsePatch` counts them. Throws on a malformed patch. */
export function countHunks(patch: string): number {
  return parsePatch(patch).reduce((sum, file) => sum + file.hunks.length, 0);
}

/**
 * Every path a patch touches, before and after (a rename gives both), sorted
 * and without duplicates.
 */
export function touchedPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const section of splitPatch(patch)) {
    if (section.oldPath) paths.add(section.oldPath);
    if (section.newPath) paths.add(section.newPath);
  }
  return [...paths].sort();
}

/** Paths that exist after the patch (created or modified; deleted files left out). */
export function resultingPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const section of splitPatch(patch)) if (section.newPath) paths.add(section.newPath);
  return [...paths].sort();
}

/**
 * The seed's "partial" control: the patch without its last hunk. When the last
 * file section is left with no hunk it is dropped with its header (a new file
 * whose only hunk goes is not created at all). Returns
 * undefined when the patch has fewer than two hunks (nothing would be left).
 * Dropping the last hunk never moves the line numbers of the hunks before it,
 * so the rest applies wherever the whole patch does.
 */
export function withoutLastHunk(patch: string): string | undefined {
  const sections = splitPatch(patch);
  const total = sections.reduce((sum, section) => sum + section.hunks.length, 0);
  if (total < 2) return undefined;
  for (let index = sections.length - 1; index >= 0; index -= 1) {
    const section = sections[index] as PatchFileSection;
    if (section.hunks.length === 0) continue;
    section.hunks.pop();
    if (section.hunks.length === 0) sections.splice(index, 1);
    break;
  }
  return joinPatch(sections);
}

/**
 * Whether a path is a test file, by the conventions of the languages berth
 * knows: a folder named `test`, `tests`, `__tests__`, `spec`, `testing` or
 * `testdata`; or a name like `test_*.py`, `*_test.py`, `conftest.py`,
 * `*_test.go`, `*.test.[cm]?[jt]sx?`, `*.spec.[cm]?[jt]sx?`, `*Test.java`,
 * `*Test.kt`, `*_spec.rb`, `*Tests.swift`. Snapshot files of test runners
 * (`__snapshots__/`, `tap-snapshots/`) count as test files too.
 */
export function isTestPath(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1) ?? '';
  const folders = parts.slice(0, -1);
  if (
    folders.some((folder) =>
      /^(tests?|__tests__|specs?|testing|testdata|__snapshots__|tap-snapshots)$/i.test(folder),
    )
  ) {
    return true;
  }
  return (
    /^test_.*\.py$/.test(name) ||
    /_test\.py$/.test(name) ||
    name === 'conftest.py' ||
    /_test\.go$/.test(name) ||
    /\.(test|spec)\.[cm]?[jt]sx?$/.test(name) ||
    /Tests?\.(java|kt|scala)$/.test(name) ||
    /_spec\.rb$/.test(name) ||
    /_test\.rb$/.test(name) ||
    /Tests?\.swift$/.test(name)
  );
}
