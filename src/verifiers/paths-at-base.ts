/**
 * Whether the files the test patch touches are, in a local environment's repository, exactly as
 * the base commit has them, read by berth itself: then the SWE-bench verifier's reset of those
 * files (src/verifiers/swebench.ts, step 1: `git diff`, `git ls-files`, `rm`, `git ls-tree`,
 * `git checkout`) has nothing to discard and nothing to put back, and the bookkeeping script
 * leaves it out (four `git` processes fewer in the sandboxed command of every such trial).
 *
 * The base is the task's snapshot, which berth wrote and committed as the base commit
 * (src/environments/local/materialise.ts: every file, `git add -A -f`): a path's base is its text
 * or binary content and executable bit, its link target, or nothing. Any doubt answers false and
 * the script resets as before:
 * - a snapshot path named in two of its maps, a base folder at a touched path, a `.gitattributes`
 *   that applies to a touched path (in the repository's top folder or a folder on its way) and
 *   names any attribute that may convert what git writes or commits (only ones that never do are
 *   let through: `-text`, `binary`, diff and merge drivers, export and linguist marks; see
 *   {@link conversionFree}), or one git would read otherwise than as plain lines (a macro, a quoted
 *   pattern, a binary file or a link), a carriage return in a touched file's base content
 *   (line-ending conversion by the host's git settings);
 * - on disk: anything but a regular file with one name, a link or nothing; a link or a file
 *   where a folder on the way should be (read with no-follow opens, src/util/safe-fs.ts);
 *   another content, another executable bit, another link target; something where the base
 *   has nothing.
 * No untrusted process is alive when the verifier starts (every command of a local environment
 * is killed with its pid namespace and cgroup), so what berth reads is what the script would see.
 * Where the agent left such a file as it was, git's listing records nothing either: the record
 * (`discarded_agent_changes`) is the same, and so is the tree the test patch applies to.
 */
import type { RepositorySnapshot } from '../tasks/task.ts';
import { readFileBeneath } from '../util/safe-fs.ts';

type Base =
  | { kind: 'file'; data: Buffer; executable: boolean }
  | { kind: 'symlink'; target: string }
  | { kind: 'missing' };

/** The base of `path` in `snapshot`, or undefined when berth cannot tell it for sure. */
function baseOf(snapshot: RepositorySnapshot, path: string, folders: ReadonlySet<string>): Base | undefined {
  if (folders.has(path)) return undefined;
  const text = snapshot.files[path];
  const binary = snapshot.binaryFiles?.[path];
  const target = snapshot.symlinks?.[path];
  const named = [text, binary, target].filter((v) => v !== undefined).length;
  const executable = snapshot.executables?.includes(path) ?? false;
  if (named > 1) return undefined;
  if (target !== undefined) return executable ? undefined : { kind: 'symlink', target };
  const data =
    text !== undefined
      ? Buffer.from(text, 'utf8')
      : binary !== undefined
        ? Buffer.from(binary, 'base64')
        : undefined;
  if (data === undefined) return executable ? undefined : { kind: 'missing' };
  if (data.includes(0x0d)) return undefined;
  return { kind: 'file', data, executable };
}

/** Every folder the snapshot's paths lie in, and the paths of its `.gitattributes` files. */
function snapshotShape(snapshot: RepositorySnapshot): { folders: Set<string>; attributes: Set<string> } {
  const folders = new Set<string>();
  const attributes = new Set<string>();
  const paths = [
    ...Object.keys(snapshot.files),
    ...Object.keys(snapshot.binaryFiles ?? {}),
    ...Object.keys(snapshot.symlinks ?? {}),
  ];
  for (const path of paths) {
    const names = path.split('/');
    if (names.at(-1) === '.gitattributes') attributes.add(path);
    for (let i = 1; i < names.length; i++) folders.add(names.slice(0, i).join('/'));
  }
  return { folders, attributes };
}

/**
 * Attributes that never change what git writes to or commits from the work tree: text
 * conversion, `ident` and filters switched off, `binary` (`-diff -merge -text`), diff and merge
 * drivers (git diff and merges only), `git archive`'s and delta compression's marks, whitespace
 * checks, GitHub's `linguist-*`. Anything else (`text`, `eol`, `crlf`, `ident`, `filter`,
 * `working-tree-encoding`, an unspecified `!attr`, an unknown name a macro could be) may.
 */
const CONVERSION_FREE =
  /^(?:-(?:text|crlf|ident|filter)|binary|-?(?:diff|merge|delta|whitespace|export-ignore|export-subst|linguist-[\w-]+)(?:=\S*)?)$/;

/**
 * Whether a `.gitattributes` text, read line by line as git does (leading blanks skipped, `#`
 * comments, a pattern then attributes split on blanks), names only conversion-free attributes.
 * A macro line (`[attr]`) or a quoted pattern: false (not read further).
 */
function conversionFree(text: string): boolean {
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^[ \t\r]+/, '');
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('"') || line.startsWith('[attr]')) return false;
    const [, ...attributes] = line.split(/[ \t\r]+/).filter((field) => field !== '');
    if (!attributes.every((attribute) => CONVERSION_FREE.test(attribute))) return false;
  }
  return true;
}

/**
 * Whether git may convert `path` at a checkout of the base: a `.gitattributes` of the snapshot
 * in the top folder or a folder on the way to it (no other applies to it) that is not a text
 * file of conversion-free attributes.
 */
function mayConvert(snapshot: RepositorySnapshot, attributes: ReadonlySet<string>, path: string): boolean {
  if (attributes.size === 0) return false;
  const names = path.split('/');
  for (let i = 0; i < names.length; i++) {
    const file = [...names.slice(0, i), '.gitattributes'].join('/');
    if (!attributes.has(file)) continue;
    const text = snapshot.files[file];
    if (
      text === undefined ||
      snapshot.binaryFiles?.[file] !== undefined ||
      snapshot.symlinks?.[file] !== undefined
    )
      return true;
    if (!conversionFree(text)) return true;
  }
  return false;
}

/**
 * True when every one of `paths` (repository-relative) below the host folder `repo` is as
 * `snapshot` has it at the base commit (see the module comment); false at the first doubt.
 */
export async function pathsAtBase(
  repo: string,
  snapshot: RepositorySnapshot,
  paths: readonly string[],
): Promise<boolean> {
  const { folders, attributes } = snapshotShape(snapshot);
  const bases: Base[] = [];
  for (const path of paths) {
    if (mayConvert(snapshot, attributes, path)) return false;
    const base = baseOf(snapshot, path, folders);
    if (!base) return false;
    bases.push(base);
  }
  const same = await Promise.all(
    paths.map(async (path, i): Promise<boolean> => {
      const base = bases[i] as Base;
      let found: Awaited<ReturnType<typeof readFileBeneath>>;
      try {
        found = await readFileBeneath(repo, path, {
          maxBytes: base.kind === 'file' ? base.data.length : 0,
        });
      } catch {
        // A path with `..` (never a test patch's: checked before), or the file system refused.
        return false;
      }
      switch (base.kind) {
        case 'missing':
          return found.kind === 'missing';
        case 'symlink':
          return found.kind === 'symlink' && found.target === base.target;
        case 'file':
          return (
            found.kind === 'file' &&
            !found.truncated &&
            found.data.equals(base.data) &&
            ((found.mode & 0o100) !== 0) === base.executable
          );
      }
    }),
  );
  return same.every(Boolean);
}
