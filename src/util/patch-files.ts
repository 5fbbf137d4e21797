/**
 * Reads the list of files a unified diff touches (git's extended headers and
 * plain `---`/`+++` pairs), without applying it. Used to discard an agent's
 * changes to the files a test patch touches, to derive SWE-bench test
 * directives, and to undo a partly applied patch.
 */

/** One file a diff touches. Paths are repository-relative, without `a/` and `b/`. */
export interface PatchFile {
  /** Path before the change; undefined when the diff creates the file. */
  oldPath?: string;
  /** Path after the change; undefined when the diff deletes the file. */
  newPath?: string;
  /** True when the diff creates the file (`--- /dev/null` or `new file mode`). */
  created: boolean;
  /** True when the diff deletes the file (`+++ /dev/null` or `deleted file mode`). */
  deleted: boolean;
}

/** Unquotes a git-quoted path (`"a/sp\303\251cial"`): C escapes and octal bytes. */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"') || raw.length < 2) return raw;
  const body = raw.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, '\\': 92, a: 7, b: 8, f: 12, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      const oct = body.slice(i + 1, i + 4);
      bytes.push(Number.parseInt(oct, 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function stripPrefix(path: string): string | undefined {
  const clean = unquoteGitPath(path.split('\t')[0]?.trimEnd() ?? '');
  if (clean === '/dev/null') return undefined;
  return clean.replace(/^[ab]\//, '');
}

function splitGitHeader(rest: string): [string, string] | undefined {
  // `a/x b/x`, possibly quoted; when unquoted with spaces, the two halves are equal for non-renames.
  const quoted = rest.match(/^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/);
  if (quoted) return [quoted[1] as string, quoted[2] as string];
  const middle = rest.indexOf(' b/');
  if (middle > 0) return [rest.slice(0, middle), rest.slice(middle + 1)];
  return undefined;
}

/** Lists the files a unified diff touches, in order. Never throws; unknown lines are ignored. */
export function patchFiles(patch: string): PatchFile[] {
  const files: PatchFile[] = [];
  const lines = patch.split(/\r?\n/);
  let current: PatchFile | undefined;
  let inGitBlock = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('diff --git ')) {
      const halves = splitGitHeader(line.slice('diff --git '.length));
      current = {
        oldPath: halves ? stripPrefix(halves[0]) : undefined,
        newPath: halves ? stripPrefix(halves[1]) : undefined,
        created: false,
        deleted: false,
      };
      files.push(current);
      inGitBlock = true;
      continue;
    }
    if (current && inGitBlock) {
      if (line.startsWith('new file mode')) current.created = true;
      else if (line.startsWith('deleted file mode')) current.deleted = true;
      else if (line.startsWith('rename from ')) current.oldPath = unquoteGitPath(line.slice(12));
      else if (line.startsWith('rename to ')) current.newPath = unquoteGitPath(line.slice(10));
      else if (line.startsWith('copy from ')) current.oldPath = unquoteGitPath(line.slice(10));
      else if (line.startsWith('copy to ')) current.newPath = unquoteGitPath(line.slice(8));
    }
    if (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) {
      const oldPath = stripPrefix(line.slice(4));
      const newPath = stripPrefix((lines[i + 1] as string).slice(4));
      if (current && inGitBlock) {
        current.oldPath = oldPath ?? (current.created ? undefined : current.oldPath);
        current.newPath = newPath ?? (current.deleted ? undefined : current.newPath);
        if (oldPath === undefined) current.created = true;
        if (newPath === undefined) current.deleted = true;
        inGitBlock = false;
      } else {
        current = { oldPath, newPath, created: oldPath === undefined, deleted: newPath === undefined };
        files.push(current);
      }
      i++;
      continue;
    }
    if (line.startsWith('@@')) inGitBlock = false;
  }
  for (const file of files) {
    if (file.created) file.oldPath = undefined;
    if (file.deleted) file.newPath = undefined;
  }
  return files;
}

/** Every path a diff touches (old and new names), deduplicated. */
export function touchedPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const file of patchFiles(patch)) {
    if (file.oldPath) paths.add(file.oldPath);
    if (file.newPath) paths.add(file.newPath);
  }
  return [...paths];
}
