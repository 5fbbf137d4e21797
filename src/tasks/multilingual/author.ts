/**
 * Builds multilingual-demo tasks from sources, the way the demo's tasks were
 * built from real commits: a base repository, the gold change and the test
 * change. The test lists are derived by running the tests, never written by
 * hand:
 *
 * - run 1: base + test patch; run 2: base + test patch + gold patch;
 * - f2p = not PASSED in run 1, PASSED in run 2 (a missing test counts as not passed);
 *   only ids run 2 reports are listed (run 1's pseudo-tests for a file that failed to load
 *   or a package that did not build are left out);
 *   p2p = PASSED in both; p2f = PASSED then not; f2f = not PASSED in both;
 * - refused: no f2p test, a test not passing with the gold patch, or a test that passed
 *   in run 1 and is missing in run 2.
 *
 * A source folder holds `task.json` (owner, repo, language, task_type,
 * task_type_reason, problem_statement, log_parser, test_cmd), `base/` (the
 * repository), `fix/` (files the gold change writes) and `tests/` (files the
 * test change writes), each overlaid on the base.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { LocalEnvironmentProvider } from '../../environments/local/local.ts';
import { InputError } from '../../errors.ts';
import { chunksOf } from '../../parsers/common.ts';
import { findParser } from '../../parsers/registry.ts';
import type { TestStatus } from '../../parsers/types.ts';
import { shellQuote } from '../../util/shell.ts';
import type { SampleTask, TaskConfig } from './format.ts';
import { TEST_PATH_ERE } from './split.ts';

/**
 * Identity and date of the base commit. With them, the same files give the same
 * commit id on every machine (and in the task's Dockerfile, which uses the same values).
 */
export const BASE_COMMIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'berth',
  GIT_AUTHOR_EMAIL: 'berth@example.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'berth',
  GIT_COMMITTER_EMAIL: 'berth@example.invalid',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** The shell command that turns a folder into a one-commit repository (also used in the Dockerfiles). */
export const BASE_COMMIT_SCRIPT =
  'git init -q && git config core.autocrlf false && git add -A && git commit -q --no-gpg-sign -m base && git rev-parse HEAD';

/**
 * The `base_commit` of a task: the sha the task's Dockerfile makes of its repository folder
 * (a copy committed with BASE_COMMIT_ENV; git only, no code of the repository runs).
 */
export async function baseCommitOf(repoDir: string): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'berth-ml-base-'));
  try {
    const copy = join(scratch, 'repo');
    await cp(repoDir, copy, { recursive: true, verbatimSymlinks: true });
    const result = await execa('bash', ['-c', BASE_COMMIT_SCRIPT], {
      cwd: copy,
      env: { ...BASE_COMMIT_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    return result.stdout.trim().split('\n').pop() as string;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const sourceSchema = z.object({
  owner: z.string(),
  repo: z.string(),
  language: z.string(),
  task_type: z.string(),
  task_type_reason: z.string(),
  problem_statement: z.string(),
  log_parser: z.string(),
  test_cmd: z.string(),
});

export interface BuiltTask {
  entry: SampleTask;
  config: TaskConfig;
  /** Statuses per test in run 1 (test patch only) and run 2 (with the gold patch). */
  before: Record<string, TestStatus>;
  after: Record<string, TestStatus>;
}

/** Builds the task of `sourceDir` into `<datasetDir>/sample_tasks/<instance_id>/`. */
export async function buildTask(sourceDir: string, datasetDir: string): Promise<BuiltTask> {
  const file = join(sourceDir, 'task.json');
  const parsedSource = sourceSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsedSource.success) {
    throw new InputError(
      { file, field: parsedSource.error.issues[0]?.path.join('.') },
      parsedSource.error.issues[0]?.message ?? '',
    );
  }
  const source = parsedSource.data;
  const parser = findParser(source.log_parser);
  if (!parser)
    throw new InputError({ file, field: 'log_parser' }, `no parser named ${source.log_parser} is registered`);

  const baseCommit = await baseCommitOf(join(sourceDir, 'base'));
  // The tests run in berth's local environment: its sandbox, its own commit of the same files.
  const env = await new LocalEnvironmentProvider().start({
    task: {
      name: source.repo,
      format: 'multilingual',
      origin: { file },
      instruction: '',
      environment: { kind: 'local', folder: join(sourceDir, 'base') },
      solution: { kind: 'none' },
      verifier: { kind: 'harbor', testsDir: '', timeoutSec: 600 },
      metadata: {},
    },
    jobId: 'multilingual-build',
    trialDir: join(tmpdir(), 'berth-ml-build'),
  });
  const base = env.baseCommit;
  try {
    const diffOf = async (overlay: string) => {
      await env.upload(join(sourceDir, overlay), env.workdir);
      const diff = await env.exec(`git add -A && git diff --cached --binary --no-renames ${base}`, {
        trusted: true,
      });
      await env.exec('git reset -q --hard && git clean -fdq', { trusted: true });
      return diff.output;
    };
    const testPatch = await diffOf('tests');
    const fixPatch = await diffOf('fix');
    const run = async (): Promise<Record<string, TestStatus>> => {
      const result = await env.exec(source.test_cmd, { timeoutSec: 600, env: { GOFLAGS: '-mod=mod' } });
      const parsed = await parser.parse(chunksOf(result.output));
      return Object.fromEntries(parsed.tests.map((test) => [test.id, test.status]));
    };
    const apply = async (patch: string) => {
      const result = await env.exec('git apply -', { input: patch, trusted: true });
      if (result.exitCode !== 0) throw new Error(`patch does not apply: ${result.output}`);
    };
    await apply(testPatch);
    const before = await run();
    await apply(fixPatch);
    const after = await run();

    // Ids only the first run reports (a test file that failed to load, a package that did not
    // build) are left out; a test that passed and then disappears refuses the task.
    const ids = Object.keys(after).sort();
    const vanished = Object.keys(before).filter((id) => !(id in after) && before[id] === 'PASSED');
    if (vanished.length > 0)
      throw new InputError({ file }, `tests disappear with the gold patch: ${vanished.join(', ')}`);
    const lists = {
      f2p_tests: [] as string[],
      p2p_tests: [] as string[],
      p2f_tests: [] as string[],
      f2f_tests: [] as string[],
    };
    for (const id of ids) {
      const was = before[id] === 'PASSED';
      const is = after[id] === 'PASSED';
      (was ? (is ? lists.p2p_tests : lists.p2f_tests) : is ? lists.f2p_tests : lists.f2f_tests).push(id);
    }
    if (lists.f2p_tests.length === 0) throw new InputError({ file }, 'no test goes from failing to passing');
    const failing = ids.filter((id) => after[id] !== 'PASSED');
    if (failing.length > 0)
      throw new InputError({ file }, `the gold patch leaves tests not passing: ${failing.join(', ')}`);

    const instanceId = `${source.owner}__${source.repo}__${baseCommit.slice(0, 8)}`;
    const entry: SampleTask = {
      instance_id: instanceId,
      task_type: source.task_type,
      task_type_reason: source.task_type_reason,
      base_commit: baseCommit,
      language: source.language,
      repo_url: `bundled:${source.owner}/${source.repo}`,
      problem_statement: source.problem_statement,
      ut_results: lists,
    };
    const config: TaskConfig = {
      instance_id: instanceId,
      log_parser: source.log_parser,
      test_cmd: source.test_cmd,
      ...lists,
    };
    await writeTaskFolder(
      join(datasetDir, 'sample_tasks', instanceId),
      sourceDir,
      entry,
      config,
      testPatch,
      fixPatch,
    );
    return { entry, config, before, after };
  } finally {
    await env.stop();
  }
}

/** Builds every source folder under `sourcesDir` and writes `<datasetDir>/sample_task.json`. */
export async function buildDataset(sourcesDir: string, datasetDir: string): Promise<BuiltTask[]> {
  const names = (await readdir(sourcesDir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  await rm(join(datasetDir, 'sample_tasks'), { recursive: true, force: true });
  const built: BuiltTask[] = [];
  for (const name of names.sort()) built.push(await buildTask(join(sourcesDir, name), datasetDir));
  await writeFile(
    join(datasetDir, 'sample_task.json'),
    `${JSON.stringify(
      built.map((task) => task.entry),
      null,
      2,
    )}\n`,
  );
  return built;
}

const TOOLCHAIN: Record<string, string> = {
  python: 'python3-pytest',
  javascript: 'nodejs (20 or later: node:test with the tap reporter)',
  go: 'golang-go',
};

async function writeTaskFolder(
  dir: string,
  sourceDir: string,
  entry: SampleTask,
  config: TaskConfig,
  testPatch: string,
  fixPatch: string,
): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  for (const sub of ['environment', 'tests', 'solution']) await mkdir(join(dir, sub), { recursive: true });
  await cp(join(sourceDir, 'base'), join(dir, 'environment', 'repo'), { recursive: true });
  await writeFile(
    join(dir, 'task.toml'),
    `# ${entry.instance_id} (${entry.task_type}, ${entry.language}); built by berth from examples/multilingual/sources.
[verifier]
timeout_sec = 600

[agent]
timeout_sec = 1800

[environment]
build_timeout_sec = 600
cpus = 1
memory_mb = 2048
storage_mb = 4096
`,
  );
  await writeFile(
    join(dir, 'instruction.md'),
    `${entry.problem_statement}\n\nThe repository is in \`/testbed\`.\n`,
  );
  const env = Object.entries(BASE_COMMIT_ENV)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  await writeFile(
    join(dir, 'environment', 'Dockerfile'),
    `# berth-multilingual:bookworm is berth-base plus the toolchains (${TOOLCHAIN[entry.language] ?? entry.language}),
# built by examples/multilingual/image/build-image.sh. The commit below reproduces base_commit ${entry.base_commit.slice(0, 12)}.
FROM berth-multilingual:bookworm
COPY repo /testbed
WORKDIR /testbed
RUN ${env} sh -c '${BASE_COMMIT_SCRIPT}'
COPY setup.sh /setup.sh
RUN bash /setup.sh
`,
  );
  await writeFile(
    join(dir, 'environment', 'setup.sh'),
    '#!/bin/bash\n# No dependencies to install: the tests use the standard library of the toolchain.\nset -euo pipefail\n',
  );
  await writeFile(join(dir, 'tests', 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  await writeFile(join(dir, 'tests', 'test_patch.diff'), testPatch);
  await writeFile(join(dir, 'tests', 'test.sh'), testScript(entry.base_commit, config.test_cmd));
  await writeFile(join(dir, 'solution', 'fix.patch'), fixPatch);
  await writeFile(
    join(dir, 'solution', 'solve.sh'),
    [
      '#!/bin/bash',
      '# The oracle: applies the gold patch.',
      'set -euo pipefail',
      'cd "$' + '{BERTH_WORKDIR:-/testbed}"',
      'git apply --whitespace=nowarn "$(dirname "$0")/fix.patch"',
      '',
    ].join('\n'),
  );
}

/**
 * A Harbor-compatible `tests/test.sh` (for `harbor run`): the same split and test patch as
 * berth, but the reward is the test command's exit status, which equals berth's verdict only
 * while the command runs exactly the listed tests. berth itself grades with the parser and
 * the lists (verify.ts).
 */
function testScript(baseCommit: string, testCmd: string): string {
  return `#!/bin/bash
# Harbor-compatible verifier. berth grades natively (docs/multilingual-tasks.md);
# this script repeats its steps for \`harbor run\` with a coarser reward (the exit status).
set -uo pipefail
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /testbed || exit 0
BASE=${baseCommit}
git add -A
git diff --cached --binary --no-renames "$BASE" > /logs/verifier/agent.diff
{
  git diff --cached --name-only --no-renames "$BASE" | grep -iE ${shellQuote(TEST_PATH_ERE.dirs)}
  git diff --cached --name-only --no-renames "$BASE" | grep -E ${shellQuote(TEST_PATH_ERE.names)}
  sed -n -e 's|^--- a/||p' -e 's|^+++ b/||p' /tests/test_patch.diff
} | sort -u > /logs/verifier/discarded.txt
git reset -q
while IFS= read -r path; do
  if git cat-file -e "$BASE:$path" 2>/dev/null; then git checkout -q "$BASE" -- "$path"; else rm -rf -- "$path"; fi
done < /logs/verifier/discarded.txt
git apply --whitespace=nowarn /tests/test_patch.diff || exit 0
( ${testCmd} ) > /logs/verifier/test-stdout.txt 2>&1 && echo 1 > /logs/verifier/reward.txt
exit 0
`;
}
