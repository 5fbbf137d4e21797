import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../errors.ts';
import { detectParser, getParser, listParsers, parseReport } from './registry.ts';

const fixtures = join(import.meta.dirname, '../../test/fixtures/parsers');
const markers = {
  start: '>>>>> Start Test Output abc123',
  end: '>>>>> End Test Output abc123',
  exitCode: '>>>>> Test Exit Code:',
};

describe('getParser', () => {
  it('finds parsers by name and alias, case-insensitively', () => {
    expect(getParser('pytest').name).toBe('pytest');
    expect(getParser('PY.TEST').name).toBe('pytest');
    expect(getParser('tap14').name).toBe('tap');
    expect(getParser('node_test').name).toBe('tap');
  });

  it('names every known format when the name is unknown', () => {
    let error: unknown;
    try {
      getParser('nunit');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(String((error as Error).message)).toMatch(
      /unknown report format "nunit"; known formats: .*pytest.*tap/,
    );
  });

  it('every registered name and alias is unique', () => {
    const names = listParsers().flatMap((p) => [p.name, ...(p.aliases ?? [])]);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('detectParser', () => {
  it('tells pytest from TAP on real files', () => {
    expect(detectParser(readFileSync(join(fixtures, 'pytest_color.log'), 'utf8'))?.name).toBe('pytest');
    expect(detectParser(readFileSync(join(fixtures, 'tap-todo.tap'), 'utf8'))?.name).toBe('tap');
    expect(detectParser('hello world\n')).toBeUndefined();
  });

  it('a TAP plan of 0 tests is TAP; XML that is not JUnit goes to the JUnit parser (for its refusal)', () => {
    expect(detectParser('1..0\n')?.name).toBe('tap');
    expect(detectParser('# TAP emitted by Test::More 0.98\n1..0 # SKIP no database\n')?.name).toBe('tap');
    expect(detectParser('ran 10..0 countdown\n')).toBeUndefined();
    const xxe =
      '<?xml version="1.0"?>\n<!DOCTYPE r [\n<!ENTITY x SYSTEM "file:///etc/passwd">\n]>\n<r>&x;</r>\n';
    expect(detectParser(xxe)?.name).toBe('junit');
    expect(detectParser('<!ENTITY % p "<!ENTITY o SYSTEM \'x\'>">\n')?.name).toBe('junit');
    // A DOCTYPE with an internal subset before a real <testsuite> root is still sure JUnit.
    expect(
      getParser('junit').detect('<!DOCTYPE t [ <!ELEMENT t ANY> ]>\n<testsuite name="a">'),
    ).toBeGreaterThan(0.9);
  });
});

describe('parseReport', () => {
  it('detects the format of a file and parses it', async () => {
    const result = await parseReport({ path: join(fixtures, 'pytest_faillogs.log') });
    expect(result.format).toBe('pytest');
    expect(result.counts).toEqual({ passed: 12, failed: 1, error: 0, skipped: 1 });
  });

  it('an undetectable input is an InputError naming it', async () => {
    const error = await parseReport('just words\n', { sourceName: 'x.log' }).catch((e) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toMatch(/^x\.log: cannot tell the report format/);
  });

  it('a missing file is an InputError naming it', async () => {
    const error = await parseReport({ path: join(fixtures, 'no-such.log') }, { format: 'pytest' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toMatch(/no-such\.log/);
  });

  it('uses the output between the markers when present', async () => {
    const log = [
      'PASSED tests/t.py::test_setup_noise',
      `+ echo '${markers.start}'`,
      markers.start,
      'PASSED tests/t.py::test_a',
      'FAILED tests/t.py::test_b - assert 0',
      markers.end,
      `${markers.exitCode} 1`,
      'PASSED tests/t.py::test_after',
    ].join('\n');
    const result = await parseReport(log, { format: 'pytest', markers });
    expect(result.markers).toBe('between');
    expect(result.tests.map((t) => t.id)).toEqual(['tests/t.py::test_a', 'tests/t.py::test_b']);
    expect(result.exitCode).toBe(1);
    expect(result.exitCodeContradicts).toBeUndefined();
  });

  it('falls back to the whole log when nothing parses between the markers (SWE-bench marker fallback)', async () => {
    const log = ['PASSED tests/test_a.py::test_outside', markers.start, markers.end].join('\n');
    const result = await parseReport(log, { format: 'pytest', markers });
    expect(result.markers).toBe('whole-log');
    expect(result.tests.map((t) => t.id)).toEqual(['tests/test_a.py::test_outside']);
    expect(result.warnings.join('\n')).toMatch(/no test result between the markers/);
  });

  it('falls back to the whole log when the start marker is missing', async () => {
    const result = await parseReport('PASSED tests/t.py::test_a\n', { format: 'pytest', markers });
    expect(result.markers).toBe('whole-log');
    expect(result.warnings.join('\n')).toMatch(/start marker not found/);
  });

  it('a missing end marker means truncated', async () => {
    const result = await parseReport(`${markers.start}\nPASSED tests/t.py::test_a\n`, {
      format: 'pytest',
      markers,
    });
    expect(result.markers).toBe('between');
    expect(result.truncated).toBe(true);
  });

  it('coloured markers and results still match', async () => {
    const log = `\u001b[1m${markers.start}\u001b[0m\n\u001b[32mPASSED\u001b[0m tests/t.py::test_a\n${markers.end}\n`;
    const result = await parseReport(log, { format: 'pytest', markers });
    expect(result.markers).toBe('between');
    expect(result.tests.map((t) => [t.id, t.status])).toEqual([['tests/t.py::test_a', 'PASSED']]);
  });

  it('flags an exit code that contradicts the results (forged PASSED lines)', async () => {
    const forged = await parseReport('PASSED tests/t.py::test_a\n', { format: 'pytest', exitCode: 1 });
    expect(forged.exitCodeContradicts).toBe(true);
    expect(forged.warnings.join('\n')).toMatch(/exited 1 but no failed/);
    const lying = await parseReport('FAILED tests/t.py::test_a\n', { format: 'pytest', exitCode: 0 });
    expect(lying.exitCodeContradicts).toBe(true);
    const fine = await parseReport('FAILED tests/t.py::test_a\n', { format: 'pytest', exitCode: 1 });
    expect(fine.exitCodeContradicts).toBeUndefined();
  });

  it('streams a large log with markers in one pass (bounded buffering)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-registry-'));
    try {
      const lines: string[] = ['noise before'];
      lines.push(markers.start);
      for (let i = 0; i < 50_000; i++) lines.push(`tests/test_${i % 50}.py::test_${i} PASSED [ 50%]`);
      lines.push(markers.end);
      const file = join(dir, 'big.log');
      await writeFile(file, `${lines.join('\n')}\n`);
      const result = await parseReport({ path: file }, { markers });
      expect(result.format).toBe('pytest');
      expect(result.markers).toBe('between');
      expect(result.counts.passed).toBe(50_000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('parseReport on a missing file without a format', () => {
  it('is an InputError naming it', async () => {
    const error = await parseReport({ path: join(fixtures, 'no-such.tap') }).catch((e) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toMatch(/no-such\.tap/);
  });
});
