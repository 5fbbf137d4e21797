/**
 * `berth dataset build`: turns a base (a snapshot folder or a git repository at
 * a commit), a gold patch and a test patch into a SWE-bench / DockerLess row,
 * deriving FAIL_TO_PASS and PASS_TO_PASS by running the tests, as SWE-bench's
 * validation does (reference: the seed swe-dockerless.md, `build_dataset.py`;
 * SWE-bench issue #195): the test files of `test_patch` run once with the test
 * patch alone and once with the test patch and the gold patch.
 *
 * - FAIL_TO_PASS: passed with gold, and did not pass without it (failed, error,
 *   skipped or absent).
 * - PASS_TO_PASS: passed both times.
 *
 * A row is refused when the gold patch leaves a test failing (FAILED or
 * ERROR), when FAIL_TO_PASS is empty, when a test seen without the gold patch
 * disappears with it, when a run reports no tests at all, or when a patch does
 * not apply.
 */
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InputError } from '../errors.ts';
import type { TestStatus } from '../parsers/types.ts';
import type { RepositorySnapshot } from '../tasks/task.ts';
import { shellQuote } from '../util/shell.ts';
import { isTestPath, resultingPaths, touchedPaths } from './patches.ts';
import { type BaseSource, git, parseLog, statusMap, UnrecognisedLogError, Workspace } from './workspace.ts';

/** Everything needed to build one row. */
export interface BuildSpec {
  instance_id: string;
  /** `owner/name`. */
  repo: string;
  problem_statement: string;
  base: BaseSource;
  /** Whether the row carries the snapshot in `dockerless.files` (else it needs `--repos` to run). */
  embedSnapshot: boolean;
  /** The upstream commit recorded as base_commit for a git base; the snapshot's commit otherwise. */
  patch: string;
  test_patch: string;
  /** Shell command with `{tests}`. */
  test_cmd: string;
  /** Test files to run; default: the test files `test_patch` leaves in place. */
  test_files?: string[];
  install?: string;
  /** Parser registry name; default: detected from the log. */
  parser?: string;
  hints_text?: string;
  created_at?: string;
  version?: string;
  /** Timeout of each test run in seconds (default 600). */
  timeoutSec?: number;
  /** Where the spec came from, for messages. */
  origin: string;
}

/** The two runs and how each test was classified. */
export interface BuildReport {
  instance_id: string;
  origin: string;
  /** Status per test with the test patch alone and with test patch + gold. */
  before: Record<string, TestStatus>;
  after: Record<string, TestStatus>;
  failToPass: string[];
  passToPass: string[];
  /** Tests skipped with gold (counted in neither list). */
  skippedAfter: string[];
  /** Reasons the row was refused; empty when it was written. */
  refused: string[];
  /** Seconds for the two test runs together. */
  testSeconds: number;
}

export interface BuildOutcome {
  row?: Record<string, unknown>;
  report: BuildReport;
}

/** Runs the two test runs and builds the row, or says why it is refused. */
export async function buildInstance(spec: BuildSpec): Promise<BuildOutcome> {
  const refused: string[] = [];
  const report: BuildReport = {
    instance_id: spec.instance_id,
    origin: spec.origin,
    before: {},
    after: {},
    failToPass: [],
    passToPass: [],
    skippedAfter: [],
    refused,
    testSeconds: 0,
  };
  let nonTest: string[];
  try {
    nonTest = touchedPaths(spec.test_patch).filter((path) => !isTestPath(path));
  } catch (error) {
    // A path that is not UTF-8 text (UndecodablePathError): nothing else can be read.
    refused.push(`test_patch: ${(error as Error).message}`);
    return { report };
  }
  if (nonTest.length > 0) refused.push(`test_patch touches files that are not tests: ${nonTest.join(', ')}`);
  const testFiles = spec.test_files ?? resultingPaths(spec.test_patch).filter(isTestPath);
  if (testFiles.length === 0) refused.push('test_patch leaves no test file to run');
  if (!spec.test_cmd.includes('{tests}')) refused.push('test_cmd has no {tests} placeholder');
  if (refused.length > 0) return { report };

  const workspace = await Workspace.create(spec.base);
  try {
    const command = spec.test_cmd.replaceAll('{tests}', testFiles.map(shellQuote).join(' '));
    const timeoutSec = spec.timeoutSec ?? 600;
    if (spec.install) {
      const install = await workspace.run(spec.install, timeoutSec);
      if (install.exitCode !== 0)
        refused.push(`install command failed (exit ${install.exitCode}): ${tail(install.output)}`);
    }
    const testOnly = await workspace.apply(spec.test_patch);
    if (!testOnly.ok) refused.push(`test_patch does not apply to the base: ${tail(testOnly.log)}`);
    if (refused.length > 0) return { report };
    const started = performance.now();
    // A log no parser recognises (tests that could not even be collected) refuses the row.
    const statuses = async (run: { output: string; exitCode: number | null }, when: string) => {
      try {
        return statusMap(await parseLog(run.output, spec.parser));
      } catch (error) {
        if (!(error instanceof UnrecognisedLogError)) throw error;
        refused.push(`${when} (exit ${run.exitCode}): ${error.message}: ${tail(run.output)}`);
        return undefined;
      }
    };
    const first = await workspace.run(command, timeoutSec);
    const before = await statuses(first, 'the test run with the test patch alone');
    if (before === undefined) return { report };
    const gold = await workspace.apply(spec.patch);
    if (!gold.ok) {
      refused.push(`gold patch does not apply on top of test_patch: ${tail(gold.log)}`);
      return { report };
    }
    const second = await workspace.run(command, timeoutSec);
    report.testSeconds = (performance.now() - started) / 1000;
    const after = await statuses(second, 'the test run with the gold patch');
    if (after === undefined) return { report };
    report.before = Object.fromEntries(before);
    report.after = Object.fromEntries(after);
    if (first.timedOut || second.timedOut) refused.push(`a test run passed its ${timeoutSec}s timeout`);
    if (before.size === 0)
      refused.push(
        `no test results with the test patch alone (exit ${first.exitCode}): ${tail(first.output)}`,
      );
    if (after.size === 0)
      refused.push(`no test results with the gold patch (exit ${second.exitCode}): ${tail(second.output)}`);

    const leftFailing = [...after]
      .filter(([, status]) => status === 'FAILED' || status === 'ERROR')
      .map(([id]) => id);
    if (leftFailing.length > 0)
      refused.push(
        `gold leaves ${leftFailing.length} failing: ${list(leftFailing)} (exit ${second.exitCode}; the run's last lines: ${tail(second.output)})`,
      );
    const disappeared = [...before.keys()].filter((id) => !after.has(id));
    if (disappeared.length > 0)
      refused.push(`${disappeared.length} test(s) disappear with the gold patch: ${list(disappeared)}`);
    for (const [id, status] of after) {
      if (status === 'PASSED') (before.get(id) === 'PASSED' ? report.passToPass : report.failToPass).push(id);
      else if (status === 'SKIPPED') report.skippedAfter.push(id);
    }
    if (report.failToPass.length === 0 && after.size > 0)
      refused.push('FAIL_TO_PASS is empty: the gold patch fixes no test');
    if (refused.length > 0) return { report };

    const row: Record<string, unknown> = {
      instance_id: spec.instance_id,
      repo: spec.repo,
      base_commit: workspace.baseCommit,
      patch: spec.patch,
      test_patch: spec.test_patch,
      problem_statement: spec.problem_statement,
      hints_text: spec.hints_text ?? '',
      created_at: spec.created_at ?? '',
      version: spec.version ?? '1.0',
      environment_setup_commit: workspace.baseCommit,
      FAIL_TO_PASS: JSON.stringify(report.failToPass),
      PASS_TO_PASS: JSON.stringify(report.passToPass),
      dockerless: {
        ...(spec.embedSnapshot && spec.base.kind === 'files' ? snapshotFields(spec.base.snapshot) : {}),
        test_cmd: spec.test_cmd,
        test_files: testFiles,
        install: spec.install ?? '',
        ...(spec.parser ? { parser: spec.parser } : {}),
      },
    };
    return { row, report };
  } finally {
    await workspace.dispose();
  }
}

/** The instance.json of a spec folder or a commit spec (see docs/authoring-datasets.md). */
interface SpecFile {
  instance_id: string;
  repo: string;
  problem_statement?: string;
  problem_statement_file?: string;
  test_cmd: string;
  test_files?: string[];
  install?: string;
  parser?: string;
  hints_text?: string;
  created_at?: string;
  version?: string;
  timeout_sec?: number;
  /** Snapshot folder, relative to the spec (default `repo/` when it exists). */
  base_dir?: string;
  /** Git base: the commit the row starts from (with `--repos`). */
  base_commit?: string;
  /** A fix commit: base_commit is its first parent, its diff is split into patch and test_patch. */
  fix_commit?: string;
  /** With `fix_commit`: paths (prefixes) that go to test_patch; default every test file by `isTestPath`. */
  test_paths?: string[];
  /** With `fix_commit`: paths to leave out of both patches (changelogs, docs). */
  exclude_paths?: string[];
  patch_file?: string;
  test_patch_file?: string;
  /** Overlay folders of full new file versions, relative to the spec (default `fix/` and `tests/`). */
  fix_dir?: string;
  tests_dir?: string;
}

const REQUIRED: (keyof SpecFile)[] = ['instance_id', 'repo', 'test_cmd'];

/**
 * Reads a spec: an instance folder holding `instance.json` (with `repo/`,
 * `fix/`, `tests/` beside it) or an `instance.json`-shaped file. `reposDir` is
 * the folder of git mirrors (`owner__name` or `owner/name`) for git bases.
 */
export async function loadSpec(path: string, reposDir?: string): Promise<BuildSpec> {
  const isDir = (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
  const file = isDir ? join(path, 'instance.json') : path;
  const folder = isDir ? path : resolve(path, '..');
  let raw: SpecFile;
  try {
    raw = JSON.parse(await readFile(file, 'utf8')) as SpecFile;
  } catch (error) {
    throw new InputError({ file }, `cannot read the instance spec: ${(error as Error).message}`);
  }
  for (const field of REQUIRED) {
    if (typeof raw[field] !== 'string' || raw[field] === '')
      throw new InputError({ file, field }, 'missing or not a string');
  }
  let problem =
    raw.problem_statement ??
    (raw.problem_statement_file
      ? await readFile(join(folder, raw.problem_statement_file), 'utf8')
      : undefined);
  if (problem === undefined && !raw.fix_commit) {
    throw new InputError({ file, field: 'problem_statement' }, 'missing (or give problem_statement_file)');
  }

  let base: BaseSource;
  let embedSnapshot: boolean;
  let patch: string | undefined;
  let testPatch: string | undefined;
  if (raw.fix_commit || raw.base_commit) {
    const repoDir = await findMirror(raw.repo, reposDir, file);
    let commit = raw.base_commit;
    if (raw.fix_commit) {
      const parent = (
        await git(repoDir, ['rev-parse', `${raw.fix_commit}^`]).catch((error: unknown) => {
          throw new InputError(
            { file, field: 'fix_commit' },
            `not found in ${repoDir}: ${(error as Error).message.split('\n')[0]}`,
          );
        })
      ).trim();
      if (commit && commit !== parent)
        throw new InputError({ file, field: 'base_commit' }, `is not the parent of fix_commit (${parent})`);
      commit = parent;
      // Without a problem statement, the fix commit's message stands in for the issue text.
      problem ??= await git(repoDir, ['log', '-1', '--format=%B', raw.fix_commit]);
      // ... and its author date for created_at, as SWE-bench records the pull request's date.
      raw.created_at ??= (await git(repoDir, ['log', '-1', '--format=%aI', raw.fix_commit])).trim();
      const split = await splitCommit(repoDir, raw.fix_commit, raw.test_paths, raw.exclude_paths ?? []);
      patch = split.patch;
      testPatch = split.testPatch;
    }
    base = { kind: 'git', repoDir, commit: commit as string };
    embedSnapshot = false;
  } else {
    const baseDir = join(folder, raw.base_dir ?? 'repo');
    base = { kind: 'files', snapshot: await readTree(baseDir, file) };
    embedSnapshot = true;
  }
  if (raw.patch_file) patch = await readFile(join(folder, raw.patch_file), 'utf8');
  if (raw.test_patch_file) testPatch = await readFile(join(folder, raw.test_patch_file), 'utf8');
  if (patch === undefined || testPatch === undefined) {
    const fixDir = join(folder, raw.fix_dir ?? 'fix');
    const testsDir = join(folder, raw.tests_dir ?? 'tests');
    const workspace = await Workspace.create(base);
    try {
      if (patch === undefined) {
        await workspace.overlay(await readTree(fixDir, file));
        patch = await workspace.diff();
        await workspace.reset();
      }
      if (testPatch === undefined) {
        await workspace.overlay(await readTree(testsDir, file));
        testPatch = await workspace.diff();
      }
    } finally {
      await workspace.dispose();
    }
  }
  if (patch.trim() === '') throw new InputError({ file, field: 'patch' }, 'the gold patch is empty');
  if (testPatch.trim() === '') throw new InputError({ file, field: 'test_patch' }, 'the test patch is empty');
  return {
    instance_id: raw.instance_id,
    repo: raw.repo,
    problem_statement: problem as string,
    base,
    embedSnapshot,
    patch,
    test_patch: testPatch,
    test_cmd: raw.test_cmd,
    test_files: raw.test_files,
    install: raw.install,
    parser: raw.parser,
    hints_text: raw.hints_text,
    created_at: raw.created_at,
    version: raw.version,
    timeoutSec: raw.timeout_sec,
    origin: file,
  };
}

/** Expands the paths given to `berth dataset build`: a folder without instance.json holds spec folders. */
export async function findSpecs(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (!info) throw new InputError({ file: path }, 'no such file or folder');
    if (info.isFile()) out.push(path);
    else if ((await stat(join(path, 'instance.json')).catch(() => undefined))?.isFile()) out.push(path);
    else {
      const entries = (await readdir(path, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((e) => e.name)
        .sort();
      for (const name of entries) {
        if ((await stat(join(path, name, 'instance.json')).catch(() => undefined))?.isFile())
          out.push(join(path, name));
      }
      if (entries.length === 0)
        throw new InputError({ file: path }, 'holds no instance folder (a folder with instance.json)');
    }
  }
  return out;
}

/** Finds the git mirror of `owner/name` under `reposDir` (`owner__name`, `owner/name`, or either ending in `.git`). */
export async function findMirror(repo: string, reposDir: string | undefined, file: string): Promise<string> {
  if (!reposDir)
    throw new InputError({ file, field: 'repo' }, `a git base needs --repos DIR holding a mirror of ${repo}`);
  const [owner, name] = repo.split('/');
  const candidates = [
    `${owner}__${name}`,
    `${owner}/${name}`,
    `${owner}__${name}.git`,
    `${owner}/${name}.git`,
  ];
  for (const candidate of candidates) {
    const dir = join(reposDir, candidate);
    if ((await stat(dir).catch(() => undefined))?.isDirectory()) return dir;
  }
  throw new InputError(
    { file, field: 'repo' },
    `no mirror of ${repo} in ${reposDir} (looked for ${candidates.join(', ')})`,
  );
}

/** Splits a fix commit's diff into the gold patch (source) and the test patch (tests). */
async function splitCommit(
  repoDir: string,
  commit: string,
  testPaths: string[] | undefined,
  excludePaths: string[],
): Promise<{ patch: string; testPatch: string }> {
  const names = (await git(repoDir, ['diff', '--name-only', '--no-renames', `${commit}^`, commit]))
    .split('\n')
    .filter(Boolean);
  const under = (path: string, prefixes: string[]) =>
    prefixes.some(
      (prefix) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
    );
  const kept = names.filter((path) => !under(path, excludePaths));
  const tests = kept.filter((path) => (testPaths ? under(path, testPaths) : isTestPath(path)));
  const source = kept.filter((path) => !tests.includes(path));
  const diff = (paths: string[]) =>
    paths.length === 0
      ? Promise.resolve('')
      : git(repoDir, [
          'diff',
          '--no-color',
          '--no-ext-diff',
          '--no-renames',
          `${commit}^`,
          commit,
          '--',
          ...paths,
        ]);
  return { patch: await diff(source), testPatch: await diff(tests) };
}

/** The row's snapshot fields (`dockerless.files`, and `binary_files`, `symlinks`, `executables` when any). */
function snapshotFields(snapshot: RepositorySnapshot): Record<string, unknown> {
  const { files, binaryFiles, symlinks, executables } = snapshot;
  return {
    files: sortKeys(files),
    ...(binaryFiles && Object.keys(binaryFiles).length > 0 ? { binary_files: sortKeys(binaryFiles) } : {}),
    ...(symlinks && Object.keys(symlinks).length > 0 ? { symlinks: sortKeys(symlinks) } : {}),
    ...(executables && executables.length > 0 ? { executables: [...executables].sort() } : {}),
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the tree under `dir` (`.git`, `node_modules`, `__pycache__` left out) as a snapshot:
 * UTF-8 text files, other files as base64 (`binary_files`), symlinks with their relative
 * targets, executable bits.
 * @throws InputError for a symlink whose target is absolute.
 */
async function readTree(dir: string, specFile: string): Promise<RepositorySnapshot> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new InputError({ file: specFile }, `folder ${dir} not found`);
  const snapshot: Required<RepositorySnapshot> = {
    files: {},
    binaryFiles: {},
    symlinks: {},
    executables: [],
  };
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const full = join(entry.parentPath, entry.name);
    const path = relative(dir, full).split(sep).join('/');
    if (/(^|\/)(\.git|node_modules|__pycache__|\.pytest_cache)(\/|$)/.test(path)) continue;
    if (entry.isSymbolicLink()) {
      const target = await readlink(full);
      if (isAbsolute(target))
        throw new InputError({ file: specFile }, `${path}: a symlink to an absolute path (${target})`);
      snapshot.symlinks[path] = target;
      continue;
    }
    const content = await readFile(full);
    let text: string | undefined;
    try {
      text = content.includes(0) ? undefined : utf8.decode(content);
    } catch {
      text = undefined;
    }
    if (text === undefined) snapshot.binaryFiles[path] = content.toString('base64');
    else snapshot.files[path] = text;
    if (((await lstat(full)).mode & 0o111) !== 0) snapshot.executables.push(path);
  }
  return snapshot;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function list(ids: string[], max = 10): string {
  return ids.slice(0, max).join(', ') + (ids.length > max ? `, ... (${ids.length - max} more)` : '');
}
