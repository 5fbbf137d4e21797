/**
 * The multilingual demo's format end to end on the bundled examples
 * (examples/multilingual): loading, building, grading with the parser
 * registry, the diff split, and the report by task type and language.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { findParser as findLogParser } from '../../parsers/registry.ts';
import { formatCategoryReport, groupByCategory } from '../../reporters/by-category.ts';
import { readCategoryRows } from '../../reporters/read-rows.ts';
import { buildTask } from './author.ts';
import { gradeMultilingual } from './grade.ts';
import { loadMultilingualDataset } from './loader.ts';
import { runMultilingualJob } from './run.ts';

const examples = resolve(import.meta.dirname, '../../../examples/multilingual');
const has = (command: string, args: string[]) => {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const toolchains =
  has('go', ['version']) && has('python3', ['-m', 'pytest', '--version']) && has('node', ['--version']);
if (!toolchains)
  console.warn(
    'multilingual runs skipped: needs go (golang-go), python3-pytest and node; see .ci/install-packages.sh',
  );

const scratch = mkdtempSync(join(tmpdir(), 'berth-ml-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('loading sample_task.json and tests/config.json', () => {
  it('loads the six bundled tasks with their lists and parsers', async () => {
    const tasks = await loadMultilingualDataset(examples);
    expect(tasks.map((task) => [task.entry.language, task.entry.task_type])).toEqual([
      ['javascript', 'FI'],
      ['python', 'BF'],
      ['go', 'RF'],
      ['javascript', 'BF'],
      ['python', 'FE'],
      ['go', 'BF'],
    ]);
    for (const task of tasks) {
      expect(task.verifier.kind).toBe('multilingual');
      expect(findLogParser(task.config.log_parser), task.config.log_parser).toBeDefined();
      expect(task.instruction.length).toBeGreaterThan(50);
    }
    const wordwrap = tasks.find((task) => task.name.includes('wordwrap'));
    expect(wordwrap?.config.f2p_tests).toEqual([
      'TestWrapCountsRunes',
      'TestWrapExactWidth',
      'TestWrapLongWord',
    ]);
  });

  function copyExamples(): string {
    const dir = mkdtempSync(join(scratch, 'ds-'));
    cpSync(examples, dir, { recursive: true });
    return dir;
  }

  it('names file and field of bad input', async () => {
    const dir = copyExamples();
    const list = JSON.parse(readFileSync(join(dir, 'sample_task.json'), 'utf8'));
    list[1].ut_results.f2p_tests = 'not a list';
    writeFileSync(join(dir, 'sample_task.json'), JSON.stringify(list));
    await expect(loadMultilingualDataset(dir)).rejects.toThrow(
      /sample_task\.json: \[1\]\.ut_results\.f2p_tests/,
    );

    list[1].ut_results.f2p_tests = '["a"]'; // a JSON-encoded list is accepted, but differs from config.json
    writeFileSync(join(dir, 'sample_task.json'), JSON.stringify(list));
    await expect(loadMultilingualDataset(dir)).rejects.toThrow(
      /config\.json: f2p_tests: differs from ut_results/,
    );

    list[1] = { ...list[0] };
    writeFileSync(join(dir, 'sample_task.json'), JSON.stringify(list));
    await expect(loadMultilingualDataset(dir)).rejects.toThrow(InputError);
    await expect(loadMultilingualDataset(dir)).rejects.toThrow(/duplicate instance_id/);
  });

  it('accepts the f2p/FAIL_TO_PASS spellings and SWE-rebench parser names', async () => {
    const dir = copyExamples();
    const [first] = JSON.parse(readFileSync(join(dir, 'sample_task.json'), 'utf8'));
    const configFile = join(dir, 'sample_tasks', first.instance_id, 'tests', 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    const renamed = {
      log_parser: 'parse_log_tap',
      test_cmd: config.test_cmd,
      FAIL_TO_PASS: config.f2p_tests,
      p2p: config.p2p_tests,
    };
    writeFileSync(configFile, JSON.stringify(renamed));
    const tasks = await loadMultilingualDataset(dir);
    expect(tasks[0]?.config.f2p_tests).toEqual(config.f2p_tests);
    expect(findLogParser('parse_log_tap')?.name).toBe('tap');
  });
});

describe('grading', () => {
  const lists = { f2p: ['a', 'b'], p2p: ['c'], p2f: ['d'], f2f: ['e'] };
  it('reward 1 only when every f2p and p2p test passed; p2f and f2f never gate', () => {
    const grade = gradeMultilingual(
      {
        truncated: false,
        tests: ['a', 'b', 'c']
          .map((id) => ({ id, status: 'PASSED' as const }))
          .concat({ id: 'd', status: 'PASSED' as const }),
      },
      lists,
    );
    expect(grade).toMatchObject({
      reward: 1,
      counts: { f2p: { passed: 2, total: 2 }, p2f: { passed: 1, total: 1 }, f2f: { passed: 0 } },
    });
  });

  it('missing, skipped, failed and truncated tests fail with the reason', () => {
    const tests = [
      { id: 'a', status: 'SKIPPED' as const },
      { id: 'c', status: 'ERROR' as const },
    ];
    const grade = gradeMultilingual({ truncated: false, tests }, lists);
    expect(grade.reward).toBe(0);
    expect(grade.verdicts.slice(0, 3).map((v) => v.reason)).toEqual(['skipped', 'missing', 'error']);
    expect(gradeMultilingual({ truncated: true, tests }, lists).verdicts[1]?.reason).toBe('truncated-log');
  });

  it('empty lists never resolve', () => {
    expect(
      gradeMultilingual({ truncated: false, tests: [] }, { f2p: [], p2p: [], p2f: [], f2f: [] }).reward,
    ).toBe(0);
  });
});

describe('report by task type and language', () => {
  it('groups rewards; a missing reward counts as 0', () => {
    const rows = [
      { categories: { task_type: 'BF', language: 'go' }, reward: 1 },
      { categories: { task_type: 'BF', language: 'python' }, reward: 0 },
      { categories: { task_type: 'FE', language: 'go' } },
    ];
    expect(groupByCategory(rows, ['language'])).toEqual([
      { key: 'language', value: 'go', trials: 2, resolved: 1, meanReward: 0.5 },
      { key: 'language', value: 'python', trials: 1, resolved: 0, meanReward: 0 },
    ]);
    expect(formatCategoryReport(rows, ['task_type'])).toContain('BF              1/2   50.0%');
  });
});

describe.skipIf(!toolchains)('running the examples (local environment)', () => {
  it('oracle resolves all six, nop none; the report groups by type and language', async () => {
    const oracle = await runMultilingualJob({
      dataset: examples,
      agent: 'oracle',
      jobsDir: scratch,
      jobName: 'oracle',
    });
    expect(oracle.trials.map((t) => [t.instance_id.split('__')[1], t.reward])).toEqual([
      ['csv-kit', 1],
      ['intervals', 1],
      ['kvconf', 1],
      ['semver-lite', 1],
      ['slugkit', 1],
      ['wordwrap', 1],
    ]);
    expect(oracle.by_language.map((g) => `${g.value} ${g.resolved}/${g.trials}`)).toEqual([
      'go 2/2',
      'javascript 2/2',
      'python 2/2',
    ]);
    const nop = await runMultilingualJob({
      dataset: examples,
      agent: 'nop',
      jobsDir: scratch,
      jobName: 'nop',
      include: [
        'berth-examples__csv-kit__b7c2829d',
        'berth-examples__intervals__14c9e9a0',
        'berth-examples__kvconf__19e8d33a',
      ],
    });
    expect(nop.trials.map((t) => t.reward)).toEqual([0, 0, 0]);
    expect(nop.trials.map((t) => t.counts?.f2p?.passed)).toEqual([0, 0, 0]);
    const trial = JSON.parse(
      readFileSync(join(scratch, 'oracle', `${oracle.trials[5]?.instance_id}__1`, 'result.json'), 'utf8'),
    );
    expect(trial.verifier_result.rewards.reward).toBe(1);
    // `berth report` reads the job's rows, or the trial folders (Harbor's field names) without them.
    const byLanguage = (rows: Awaited<ReturnType<typeof readCategoryRows>>) =>
      [...rows].sort((a, b) => String(a.categories.language).localeCompare(String(b.categories.language)));
    const fromJob = await readCategoryRows(join(scratch, 'oracle'), ['language']);
    rmSync(join(scratch, 'oracle', 'result.json'));
    const fromTrials = await readCategoryRows(join(scratch, 'oracle'), ['language']);
    expect(fromTrials).toHaveLength(6);
    expect(byLanguage(fromTrials)).toEqual(byLanguage(fromJob));
    expect(formatCategoryReport(fromTrials, ['language'])).toContain('total  resolved 6/6 (100.0%)');
  }, 180_000);

  it('test changes are discarded: a planted conftest and rewritten tests do not pass; gold plus test noise still does', async () => {
    const job = await runMultilingualJob({
      dataset: examples,
      agent: 'predictions',
      predictionsFile: join(examples, 'predictions', 'controls.jsonl'),
      jobsDir: scratch,
      jobName: 'controls',
      include: [
        'berth-examples__intervals__14c9e9a0',
        'berth-examples__slugkit__20e1b5ee',
        'berth-examples__wordwrap__6bc701d6',
        'berth-examples__semver-lite__47278026',
      ],
    });
    const byRepo = Object.fromEntries(job.trials.map((t) => [t.instance_id.split('__')[1], t]));
    expect(byRepo.intervals).toMatchObject({
      reward: 0,
      discarded_test_files: ['conftest.py', 'tests/test_core.py'],
    });
    expect(byRepo.intervals?.counts?.f2p).toEqual({ passed: 0, total: 3 });
    expect(byRepo.slugkit).toMatchObject({
      reward: 1,
      discarded_test_files: ['tests/test_mine.py', 'tests/test_slug.py'],
    });
    expect(byRepo.wordwrap).toMatchObject({ reward: 1, discarded_test_files: ['extra_test.go'] });
    expect(byRepo['semver-lite']).toMatchObject({
      reward: 0,
      counts: { f2p: { passed: 2, total: 3 }, p2p: { passed: 4, total: 4 } },
    });
    const dir = join(scratch, 'controls', 'berth-examples__intervals__14c9e9a0__1', 'verifier');
    expect(readFileSync(join(dir, 'test_changes.diff'), 'utf8')).toContain('conftest.py');
    expect(readFileSync(join(dir, 'code_changes.diff'), 'utf8')).toBe('');
  }, 120_000);

  it('building a task from its sources reproduces the committed task (same base commit and lists)', async () => {
    const built = await buildTask(join(examples, 'sources', 'wordwrap'), join(scratch, 'built'));
    const committed = JSON.parse(readFileSync(join(examples, 'sample_task.json'), 'utf8')).find(
      (entry: { instance_id: string }) => entry.instance_id === built.entry.instance_id,
    );
    expect(built.entry).toEqual(committed);
    expect(built.before.TestWrapExactWidth).toBe('FAILED');
    expect(built.after.TestWrapExactWidth).toBe('PASSED');
    expect(
      readFileSync(
        join(scratch, 'built', 'sample_tasks', built.entry.instance_id, 'tests', 'test_patch.diff'),
        'utf8',
      ),
    ).toBe(
      readFileSync(
        join(examples, 'sample_tasks', built.entry.instance_id, 'tests', 'test_patch.diff'),
        'utf8',
      ),
    );
  }, 60_000);
});
