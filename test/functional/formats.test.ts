import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../src/errors.ts';
import { joinSolution, readProblems, readSamples, writeResults } from '../../src/functional/formats.ts';
import { parseKs, passAtK, passAtKSummary } from '../../src/functional/pass-at-k.ts';
import { dropSignature, postprocess, stopAt, stripComments } from '../../src/functional/postprocess.ts';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'functional');
const dir = mkdtempSync(join(tmpdir(), 'berth-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('problem files', () => {
  it('reads human-eval rows (no language field: python) from plain and gzip files', async () => {
    const plain = await readProblems(join(fixtures, 'humaneval-2.jsonl'));
    const gz = join(dir, 'h.jsonl.bin');
    writeFileSync(gz, gzipSync(readFileSync(join(fixtures, 'humaneval-2.jsonl'))));
    const zipped = await readProblems(gz);
    expect([...plain.keys()]).toEqual(['HumanEval/0', 'HumanEval/1']);
    expect(zipped.get('HumanEval/0')).toMatchObject({
      language: 'python',
      entry_point: 'has_close_elements',
      has_canonical_solution: true,
    });
    expect(zipped.get('HumanEval/1')?.prompt).toBe(plain.get('HumanEval/1')?.prompt);
  });

  it('reads MXEval rows whose canonical solution is null', async () => {
    const problems = await readProblems(join(fixtures, 'kotlin-humaneval-2.jsonl'));
    expect(problems.get('HumanEval_kotlin/0')).toMatchObject({
      language: 'kotlin',
      canonical_solution: '',
      has_canonical_solution: false,
    });
    expect(problems.get('HumanEval_kotlin/0')?.description).toBeTypeOf('string');
  });

  it('reads Kotlin HumanEval rows whose canonical solution is a sequence of strings, and JSON arrays', async () => {
    const file = join(dir, 'kt.json');
    const row = {
      task_id: 'HumanEval/0',
      prompt: 'fun f(x: Int): Int {\n',
      entry_point: 'f',
      test: '\nfun main() { if (f(1) != 2) throw Exception("no") }\n',
      description: 'add one',
      language: 'kotlin',
      canonical_solution: ['    return x + 1', '}', ''],
    };
    writeFileSync(file, JSON.stringify([row]));
    const problems = await readProblems(file);
    expect(problems.get('HumanEval/0')?.canonical_solution).toBe('    return x + 1\n}\n');
    expect(joinSolution(['a\n', 'b\n'])).toBe('a\nb\n');
  });

  it('names file, line and field for bad rows', async () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ task_id: 'a', entry_point: 'f', prompt: 'p', test: 't' })}\n${JSON.stringify({ task_id: 'b', entry_point: 'f', prompt: 'p' })}\n`,
    );
    await expect(readProblems(file)).rejects.toThrow(InputError);
    await expect(readProblems(file)).rejects.toThrow(/bad\.jsonl:2: test: missing/);
    writeFileSync(
      file,
      `${JSON.stringify({ task_id: 'a', entry_point: 'f', prompt: 'p', test: 't' })}\n{not json\n`,
    );
    await expect(readProblems(file)).rejects.toThrow(/:2: not valid JSON/);
    writeFileSync(
      file,
      `${JSON.stringify({ task_id: 'a', entry_point: 'f', prompt: 'p', test: 't' })}\n${JSON.stringify({ task_id: 'a', entry_point: 'f', prompt: 'p', test: 't' })}\n`,
    );
    await expect(readProblems(file)).rejects.toThrow(/duplicate task_id a/);
  });

  it('refuses a Python problem without entry_point (its test calls check(entry_point)) and an empty task_id', async () => {
    const file = join(dir, 'no-entry.jsonl');
    const good = {
      task_id: 'a',
      entry_point: 'f',
      prompt: 'def f():\n',
      test: 'def check(c):\n    assert c() == 1\n',
    };
    const { entry_point: _, ...noEntry } = good;
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify({ ...noEntry, task_id: 'b' })}\n`);
    await expect(readProblems(file)).rejects.toThrow(/no-entry\.jsonl:2: entry_point: missing or empty/);
    writeFileSync(file, `${JSON.stringify({ ...good, entry_point: 'f)\nimport os' })}\n`);
    await expect(readProblems(file)).rejects.toThrow(/:1: entry_point: must be a Python function name/);
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify({ ...good, task_id: '' })}\n`);
    await expect(readProblems(file)).rejects.toThrow(/:2: task_id: must not be empty/);
    // Other languages assemble prompt + completion + test: no entry_point needed (mxeval).
    writeFileSync(file, `${JSON.stringify({ ...noEntry, language: 'javascript' })}\n`);
    expect((await readProblems(file)).get('a')?.language).toBe('javascript');
  });
});

describe('samples and results', () => {
  it('numbers several samples per task and writes results in file order', async () => {
    const problems = await readProblems(join(fixtures, 'humaneval-2.jsonl'));
    const file = join(dir, 'samples.jsonl');
    const rows = [
      { task_id: 'HumanEval/1', completion: 'a', extra: 1 },
      { task_id: 'HumanEval/0', completion: 'b', language: 'python' },
      { task_id: 'HumanEval/1', completion: 'c' },
    ];
    writeFileSync(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n\n`);
    const samples = await readSamples(file, problems);
    expect(samples.map((sample) => [sample.task_id, sample.completion_id, sample.index])).toEqual([
      ['HumanEval/1', 0, 0],
      ['HumanEval/0', 0, 1],
      ['HumanEval/1', 1, 2],
    ]);
    await writeResults(join(dir, 'r.jsonl'), samples, [
      { passed: true, result: 'passed', time_elapsed: 0.01 },
      { passed: false, result: 'timed out', kind: 'timeout', time_elapsed: 3 },
      { passed: false, result: 'failed: ', kind: 'test_failure', time_elapsed: 0.5 },
    ]);
    const written = readFileSync(join(dir, 'r.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(written[0]).toEqual({
      task_id: 'HumanEval/1',
      completion: 'a',
      extra: 1,
      result: 'passed',
      passed: true,
      time_elapsed: 0.01,
    });
    expect(written[1]).toMatchObject({ result: 'timed out', passed: false, failure_kind: 'timeout' });
  });

  it('refuses a sample for an unknown task', async () => {
    const problems = await readProblems(join(fixtures, 'humaneval-2.jsonl'));
    const file = join(dir, 'unknown.jsonl');
    writeFileSync(file, `${JSON.stringify({ task_id: 'HumanEval/9', completion: '' })}\n`);
    await expect(readSamples(file, problems)).rejects.toThrow(/:1: task_id: no problem HumanEval\/9/);
  });
});

describe('pass@k', () => {
  it('matches the closed form 1 - C(n-c,k)/C(n,k)', () => {
    const choose = (n: number, k: number): number => {
      let value = 1;
      for (let i = 0; i < k; i++) value = (value * (n - i)) / (i + 1);
      return value;
    };
    for (const [n, c, k] of [
      [10, 3, 1],
      [10, 3, 5],
      [20, 0, 10],
      [200, 37, 100],
      [5, 5, 5],
    ] as const) {
      const expected = n - c < k ? 1 : 1 - choose(n - c, k) / choose(n, k);
      expect(passAtK(n, c, k)).toBeCloseTo(expected, 12);
    }
    expect(passAtK(200, 0, 100)).toBe(0);
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 15);
  });

  it("reproduces human-eval's README sanity check (pass@1 = 0.5 for 3 of 6)", () => {
    expect(passAtKSummary([{ n: 6, c: 3 }])['pass@1']).toBeCloseTo(0.5, 12);
  });

  it('defaults to the ks every task has enough samples for, and refuses a k above the fewest', () => {
    const counts = [
      { n: 20, c: 5 },
      { n: 12, c: 0 },
    ];
    expect(Object.keys(passAtKSummary(counts))).toEqual(['pass@1', 'pass@10']);
    expect(() => passAtKSummary(counts, [1, 15])).toThrow(UsageError);
    expect(() => passAtKSummary(counts, [1, 15])).toThrow(
      /pass@15 cannot be estimated: the task with the fewest samples has 12/,
    );
    // 1 - C(15,12)/C(20,12) = 1 - 455/125970 for the first task, 0 for the second.
    expect(passAtKSummary(counts, [12])['pass@12']).toBeCloseTo((1 - 455 / 125970) / 2, 12);
    expect(parseKs('1, 10')).toEqual([1, 10]);
    expect(() => parseKs('1,x')).toThrow(UsageError);
  });
});

describe('post-processing steps', () => {
  it('stop at "\\n}\\n" keeps the closing brace', () => {
    expect(stopAt('  return 1\n}\n\nfun main() {\n}\n', ['\n}\n'])).toBe('  return 1\n}\n');
    expect(stopAt('no stop', ['\n}\n'])).toBe('no stop');
  });

  it('strips comments with the seed regexes and drops the signature line', () => {
    expect(stripComments('a // b\n/* c\n d */e')).toBe('a \ne');
    expect(dropSignature('/** doc */\nfun f() {\n  body\n}')).toBe('  body\n}');
    expect(dropSignature('no signature')).toBeUndefined();
    const prompt = '/**\n * Add.\n */\nfun add(a: Int, b: Int): Int {\n';
    expect(
      postprocess(prompt, '    return a + b // sum\n}\n\nfun main() {}\n', {
        stopAt: ['\n}\n'],
        stripComments: true,
        dropSignature: true,
      }),
    ).toBe('    return a + b \n}\n');
  });
});
