/**
 * Unified-diff helpers for dataset authoring: the files a patch touches, its
 * hunks, and the "partial" control (the patch without its last hunk). The
 * sections come from berth's one diff parser (src/util/patch-files.ts), as
 * text, so git's headers (`diff --git`, `index`, modes, `new file`) survive
 * untouched; jsdiff's `parsePatch` checks that a patch parses and counts its hunks.
 */
import { type DiffSection, parseDiff, sectionText } from '../util/patch-files.ts';

export { countHunks } from '../util/patch-files.ts';

/** One file section of a unified diff: its header lines and its hunks, as text. */
export type PatchFileSection = DiffSection;

/** Splits a unified diff into file sections and hunks (src/util/patch-files.ts). */
export function splitPatch(patch: string): PatchFileSection[] {
  return parseDiff(patch);
}

/** Joins sections back into a patch. */
export function joinPatch(sections: PatchFileSection[]): string {
  return sections.map(sectionText).join('');
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
