/**
 * Builds the DockerLess rows of bench/real-rows/rows.json from the projects' git mirrors:
 * for each fix commit, a snapshot folder (the base commit's files in `repo/`, the fix split
 * into `gold.diff` and `test.diff`), then `berth dataset build` over all of them. Everything
 * lands in a scratch folder (their code is never committed); a second call reuses it.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isTestPath } from '../../src/datasets/patches.ts';
import { checkoutFromMirror } from '../../src/environments/local/materialise.ts';

const run = promisify(execFile);

/** One row of rows.json. */
export interface RowSpec {
  instance_id: string;
  repo: string;
  language: 'python' | 'javascript' | 'go';
  fix_commit: string;
  /** Paths (prefixes) whose changes form the test patch; default: every test file (`isTestPath`). */
  test_paths?: string[];
  test_files: string[];
  test_cmd: string;
  install?: string;
}

export const SPECS = fileURLToPath(new URL('rows.json', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

export async function readSpecs(): Promise<RowSpec[]> {
  return (JSON.parse(await readFile(SPECS, 'utf8')) as { rows: RowSpec[] }).rows;
}

/** The git directory of `repo` under `mirrors` (`owner+name/repo`, as fetched, or `owner__name`). */
export function mirrorOf(mirrors: string, repo: string): string {
  const [owner, name] = repo.split('/') as [string, string];
  for (const candidate of [join(mirrors, `${owner}+${name}`, 'repo'), join(mirrors, `${owner}__${name}`)]) {
    if (existsSync(join(candidate, 'objects'))) return candidate;
    if (existsSync(join(candidate, '.git'))) return join(candidate, '.git');
  }
  throw new Error(`no git mirror of ${repo} under ${mirrors} (fetch it: github:${repo})`);
}

const git = async (gitDir: string, args: string[]) =>
  (await run('git', ['--git-dir', gitDir, ...args], { maxBuffer: 1 << 28 })).stdout;

/** Only source files go to the gold patch (changelogs, docs and build files are left out). */
const SOURCE = /\.(py|js|cjs|mjs|go)$/;

async function snapshotFolder(spec: RowSpec, gitDir: string, dir: string): Promise<void> {
  const base = (await git(gitDir, ['rev-parse', `${spec.fix_commit}^`])).trim();
  await rm(dir, { recursive: true, force: true });
  await checkoutFromMirror(gitDir, base, join(dir, 'repo'));
  const changed = (await git(gitDir, ['diff', '--name-only', '--no-renames', base, spec.fix_commit]))
    .split('\n')
    .filter(Boolean);
  const isTest = (path: string) =>
    spec.test_paths ? spec.test_paths.some((p) => path.startsWith(p)) : isTestPath(path);
  const tests = changed.filter(isTest);
  const gold = changed.filter((path) => !isTest(path) && SOURCE.test(path));
  const diff = (paths: string[]) =>
    git(gitDir, ['diff', '--binary', '--no-renames', base, spec.fix_commit, '--', ...paths]);
  await writeFile(join(dir, 'gold.diff'), await diff(gold));
  await writeFile(join(dir, 'test.diff'), await diff(tests));
  const message = await git(gitDir, ['log', '-1', '--format=%B', spec.fix_commit]);
  const created = (await git(gitDir, ['log', '-1', '--format=%aI', spec.fix_commit])).trim();
  await writeFile(
    join(dir, 'instance.json'),
    JSON.stringify(
      {
        instance_id: spec.instance_id,
        repo: spec.repo,
        problem_statement: message,
        created_at: created,
        test_cmd: spec.test_cmd,
        test_files: spec.test_files,
        ...(spec.install ? { install: spec.install } : {}),
        patch_file: 'gold.diff',
        test_patch_file: 'test.diff',
      },
      null,
      2,
    ),
  );
}

/**
 * The rows file (built once into `scratch`; `fresh` rebuilds it).
 * @returns the path of `rows.jsonl` and the build report's path.
 */
export async function prepareRows(
  specs: RowSpec[],
  mirrors: string,
  scratch: string,
  fresh = false,
): Promise<string> {
  const rows = join(scratch, 'rows.jsonl');
  const key = join(scratch, 'rows.key');
  const wanted = JSON.stringify(specs);
  if (!fresh && existsSync(rows) && (await readFile(key, 'utf8').catch(() => '')) === wanted) return rows;
  const folders = join(scratch, 'specs');
  await rm(folders, { recursive: true, force: true });
  await mkdir(folders, { recursive: true });
  for (const spec of specs)
    await snapshotFolder(spec, mirrorOf(mirrors, spec.repo), join(folders, spec.instance_id));
  const report = join(scratch, 'build.json');
  const built = await run('node', [BIN, 'dataset', 'build', folders, '-o', rows, '--report', report], {
    maxBuffer: 1 << 26,
  }).catch((error: { stdout?: string; stderr?: string }) => error);
  const lines = existsSync(rows) ? (await readFile(rows, 'utf8')).trim().split('\n').filter(Boolean) : [];
  if (lines.length !== specs.length)
    throw new Error(
      `berth dataset build accepted ${lines.length} of ${specs.length} rows (see ${report}):\n${built.stdout ?? ''}${built.stderr ?? ''}`,
    );
  await writeFile(key, wanted);
  return rows;
}
