/**
 * Console-log parsers for cargo, jest, vitest, mocha, PHPUnit, RSpec, minitest,
 * test-unit, GoogleTest, ctest, swift test, Gradle and Maven, on reports made
 * by the real runners (test/fixtures/parsers/generated, see its README) or,
 * where no toolchain runs offline, on examples following the runners' own
 * documentation (test/fixtures/parsers/documented). Every expected map below
 * was checked by hand against the report it comes from.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunksOf } from './common.ts';
import { gradleId } from './gradle.ts';
import { scanJson } from './json-stream.ts';
import { detectParser, getParser, parseReport } from './registry.ts';
import { joinDescriptions } from './rspec.ts';
import type { ParseResult } from './types.ts';

const root = join(import.meta.dirname, '../../test/fixtures/parsers');
const generated = join(root, 'generated');
const documented = join(root, 'documented');

const statusMap = (r: ParseResult) => Object.fromEntries(r.tests.map((t) => [t.id, t.status]));
const parseFile = (dir: string, file: string, format?: string) =>
  parseReport({ path: join(dir, file) }, format ? { format } : {});

async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const EXPECTED: Record<string, { format: string; tests: Record<string, string> }> = {
  'cargo-test.txt': {
    format: 'cargo',
    tests: {
      'tests::adds': 'PASSED',
      'tests::fails': 'FAILED',
      'tests::network': 'SKIPPED',
      'tests::nested::deep_test': 'PASSED',
      'tests::panics': 'PASSED',
      'tests::slow': 'SKIPPED',
      adds: 'PASSED',
      prints_and_passes: 'PASSED',
      'src/lib.rs - double (line 10)': 'FAILED',
      'src/lib.rs - add (line 3)': 'PASSED',
    },
  },
  'jest-verbose.txt': {
    format: 'jest',
    tests: {
      'top-level test': 'PASSED',
      'sum > adds 1 + 2 to equal 3': 'PASSED',
      'sum > fails on purpose': 'FAILED',
      'sum > is skipped': 'SKIPPED',
      'sum > is a todo': 'SKIPPED',
      'sum > nested > adds 1 + 2 to equal 3': 'PASSED',
      'other passes': 'PASSED',
    },
  },
  'vitest-verbose.txt': {
    format: 'vitest',
    tests: {
      'sum.test.js > sum > adds 1 + 2 to equal 3': 'PASSED',
      'sum.test.js > sum > fails on purpose': 'FAILED',
      'sum.test.js > sum > is skipped': 'SKIPPED',
      'sum.test.js > sum > is a todo': 'SKIPPED',
      'sum.test.js > sum > nested > adds 1 + 2 to equal 3': 'PASSED',
      'sum.test.js > top-level test': 'PASSED',
      'other.test.js > other passes': 'PASSED',
    },
  },
  'mocha-spec.txt': {
    format: 'mocha',
    tests: {
      'sum adds 1 + 2 to equal 3': 'PASSED',
      'sum fails on purpose': 'FAILED',
      'sum is skipped': 'SKIPPED',
      'sum is pending': 'SKIPPED',
      'sum nested adds 1 + 2 to equal 3': 'PASSED',
      'hooks "before all" hook for "never runs"': 'ERROR',
    },
  },
  'phpunit-testdox.txt': {
    format: 'phpunit',
    tests: {
      'Calculator > Adds two numbers': 'PASSED',
      'Calculator > Fails on purpose': 'FAILED',
      'Calculator > Throws an error': 'FAILED',
      'Calculator > Is skipped': 'SKIPPED',
      'Calculator > Is incomplete': 'SKIPPED',
      'Calculator > Adds pairs with data set "small"': 'PASSED',
      'Calculator > Adds pairs with data set "wrong"': 'FAILED',
      'String Util > Upper cases a word': 'PASSED',
    },
  },
  'rspec-documentation.txt': {
    format: 'rspec',
    tests: {
      'Calc#add adds two numbers': 'PASSED',
      'Calc#add fails on purpose': 'FAILED',
      'Calc#add is pending': 'SKIPPED',
      'Calc#add is skipped': 'SKIPPED',
      'Calc#add with negative numbers adds them': 'PASSED',
      'Calc#add with negative numbers raises an error': 'FAILED',
    },
  },
  'minitest-v.txt': {
    format: 'minitest',
    tests: {
      'OtherTest#test_passes': 'PASSED',
      'CalcTest#test_skipped': 'SKIPPED',
      'CalcTest#test_fails': 'FAILED',
      'CalcTest#test_adds': 'PASSED',
      'CalcTest#test_errors': 'ERROR',
    },
  },
  'test-unit-v.txt': {
    format: 'test-unit',
    tests: {
      'TestCalc#test: adds negative numbers': 'PASSED',
      'TestCalc#test_adds': 'PASSED',
      'TestCalc#test_errors': 'ERROR',
      'TestCalc#test_fails': 'FAILED',
      'TestCalc#test_omitted': 'SKIPPED',
      'TestCalc#test_pending': 'SKIPPED',
    },
  },
  'gtest-output.txt': {
    format: 'googletest',
    tests: {
      'CalcTest.Adds': 'PASSED',
      'CalcTest.FailsOnPurpose': 'FAILED',
      'CalcTest.Skipped': 'SKIPPED',
      'TypedTest/0.ZeroIsZero': 'PASSED',
      'TypedTest/1.ZeroIsZero': 'PASSED',
      'Evens/ParamTest.IsEven/0': 'PASSED',
      'Evens/ParamTest.IsEven/1': 'FAILED',
      'Evens/ParamTest.IsEven/2': 'PASSED',
    },
  },
  'maven-surefire.txt': {
    format: 'maven',
    tests: {
      // surefire prints CalcTest's counts against its nested class: kept as reported.
      'com.example.CalcTest$Inner': 'ERROR',
      'com.example.CalcTest.failsOnPurpose': 'FAILED',
      'com.example.CalcTest.throwsAnError': 'ERROR',
      'com.example.OtherTest': 'PASSED',
    },
  },
};

describe('runner reports generated with the real runners', () => {
  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file}: detected as ${expected.format}, every test as the runner reported it`, async () => {
      const result = await parseFile(generated, file);
      expect(result.format).toBe(expected.format);
      expect(statusMap(result)).toEqual(expected.tests);
      expect(result.warnings).toEqual([]);
      expect(result.truncated).toBe(false);
    });
  }

  it('JSON reports give the same ids and statuses as the console form (jest, mocha, RSpec)', async () => {
    for (const [json, text] of [
      ['jest.json.txt', 'jest-verbose.txt'],
      ['mocha.json.txt', 'mocha-spec.txt'],
      ['rspec.json.txt', 'rspec-documentation.txt'],
    ] as const) {
      const a = await parseFile(generated, json);
      const b = await parseFile(generated, text);
      expect(a.format).toBe(b.format);
      expect(statusMap(a)).toEqual(statusMap(b));
      expect(a.warnings).toEqual([]);
    }
  });

  it('vitest JSON: ancestors > title, the absolute file kept aside', async () => {
    const result = await parseFile(generated, 'vitest.json.txt');
    expect(result.format).toBe('vitest');
    expect(statusMap(result)).toEqual({
      'other passes': 'PASSED',
      'sum > adds 1 + 2 to equal 3': 'PASSED',
      'sum > fails on purpose': 'FAILED',
      'sum > is skipped': 'SKIPPED',
      'sum > is a todo': 'SKIPPED',
      'sum > nested > adds 1 + 2 to equal 3': 'PASSED',
      'top-level test': 'PASSED',
    });
    expect(String(result.tests.find((t) => t.id === 'top-level test')?.file)).toMatch(/sum\.test\.js$/);
  });

  it('ctest: one result per registered test; a crash and a missing executable are errors', async () => {
    const result = await parseFile(generated, 'ctest-output.txt', 'ctest');
    expect(statusMap(result)).toEqual({
      calc_test: 'FAILED',
      other_test: 'PASSED',
      crashes: 'ERROR',
      skipped_test: 'SKIPPED',
      not_built: 'ERROR',
    });
  });

  it('googletest inside ctest -V: prefixes removed, every binary read', async () => {
    const result = await parseFile(generated, 'ctest-verbose.txt', 'googletest');
    expect(statusMap(result)).toMatchObject({ 'CalcTest.Adds': 'PASSED', 'Other.Passes': 'PASSED' });
    expect(result.tests).toHaveLength(9);
  });

  it('every generated report parses the same whatever the chunking', async () => {
    for (const file of readdirSync(generated).filter((f) => f.endsWith('.txt'))) {
      const text = readFileSync(join(generated, file), 'utf8');
      const whole = await parseReport(text);
      const parser = getParser(whole.format);
      const split = await parser.parse(pieces(text, 5));
      expect(split.tests, file).toEqual(whole.tests);
    }
  });
});

describe('runners without an offline toolchain: examples following their documentation', () => {
  it('swift test, XCTest on Linux and macOS give the same ids', async () => {
    const linux = await parseFile(documented, 'swift-xctest-linux.txt');
    const mac = await parseFile(documented, 'swift-xctest-macos.txt');
    expect(linux.format).toBe('swift-test');
    expect(statusMap(linux)).toEqual({
      'CalculatorTests.testAdds': 'PASSED',
      'CalculatorTests.testFailsOnPurpose': 'FAILED',
      'CalculatorTests.testSkipped': 'SKIPPED',
    });
    expect(statusMap(mac)).toEqual({
      'CalculatorTests.testAdds': 'PASSED',
      'CalculatorTests.testFailsOnPurpose': 'FAILED',
    });
    expect(mac.tests[0]?.module).toBe('CalcTests');
  });

  it('swift test, Swift Testing: function and display names, parameterised tests, skips', async () => {
    const result = await parseFile(documented, 'swift-testing.txt');
    expect(result.format).toBe('swift-test');
    expect(statusMap(result)).toEqual({
      'example()': 'PASSED',
      'Food truck exists': 'FAILED',
      'add(_:_:)': 'PASSED',
      'Needs network': 'SKIPPED',
    });
    expect(result.tests.find((t) => t.id === 'Needs network')?.message).toBe('no network in the sandbox');
    expect(result.truncated).toBe(false);
  });

  it('Gradle console: JUnit-style ids, interleaved and merged lines', async () => {
    const result = await parseFile(documented, 'gradle-console.txt');
    expect(result.format).toBe('gradle');
    expect(statusMap(result)).toEqual({
      'com.example.CalculatorTest.adds two numbers()': 'PASSED',
      'com.example.CalculatorTest.fails on purpose()': 'FAILED',
      'com.example.CalculatorTest.skipped()': 'SKIPPED',
      'com.example.CalculatorTest$Nested.inner test()': 'PASSED',
      'com.example.ParamTest.isEven(int)[1]': 'PASSED',
      'com.example.ParamTest.isEven(int)[2]': 'FAILED',
      'org.logstash.dependencies.ReportGeneratorTest.testReportWithConflictingLicenses': 'PASSED',
      'com.example.Test.testTwo': 'PASSED',
    });
    expect(result.tests[0]?.printed).toBe('com.example.CalculatorTest > adds two numbers()');
    expect(result.warnings).toEqual([]);
  });

  it('Gradle console: every event of a line holding two or more, FAILED ones never lost (issue 12)', async () => {
    const text = [
      '> Task :test',
      'com.example.CalcTest > negates() PASSEDcom.example.CalcTest > squares() PASSED',
      'com.example.CalcTest > adds() PASSEDcom.example.CalcTest > divides() FAILED',
      '    java.lang.AssertionError at CalcTest.kt:20',
      'com.example.CalcTest > mods() FAILEDPicked up JAVA_TOOL_OPTIONS: -Dfile.encoding=UTF-8',
      'com.example.CalcTest > returns PASSED when ok() PASSEDcom.example.CalcTest > waits()',
      'WARNING: interleaved output',
      'SKIPPED',
      '7 tests completed, 2 failed, 1 skipped',
      '',
    ].join('\n');
    const result = await getParser('gradle').parse(chunksOf(text));
    expect(statusMap(result)).toEqual({
      'com.example.CalcTest.negates()': 'PASSED',
      'com.example.CalcTest.squares()': 'PASSED',
      'com.example.CalcTest.adds()': 'PASSED',
      'com.example.CalcTest.divides()': 'FAILED',
      'com.example.CalcTest.mods()': 'FAILED',
      'com.example.CalcTest.returns PASSED when ok()': 'PASSED',
      'com.example.CalcTest.waits()': 'SKIPPED',
    });
    expect(result.warnings).toEqual([]);
    // A FAILED that no event can be read from is said.
    const odd = await getParser('gradle').parse(
      chunksOf('com.example.CalcTest > x() FAILED but then text\n'),
    );
    expect(odd.warnings.join('\n')).toMatch(
      /hold FAILED after a test name but no test event could be read \(line 1\)/,
    );
  });
});

describe('cut-short and broken output', () => {
  it('a GoogleTest binary that crashed mid-test: ERROR and truncated', async () => {
    const text = '[ RUN      ] A.ok\n[       OK ] A.ok (0 ms)\n[ RUN      ] A.crashes\nSegmentation fault\n';
    const result = await parseReport(text);
    expect(statusMap(result)).toEqual({ 'A.ok': 'PASSED', 'A.crashes': 'ERROR' });
    expect(result.truncated).toBe(true);
  });

  it('cargo: a binary without its "test result" line is truncated; --nocapture status lines count', async () => {
    const text = 'running 2 tests\ntest a ... ok\ntest b ... \nsome output\nok\n';
    const result = await parseReport(text, { format: 'cargo' });
    expect(statusMap(result)).toEqual({ a: 'PASSED', b: 'PASSED' });
    expect(result.truncated).toBe(true);
  });

  it('a jest JSON report cut in the middle keeps the tests read and is truncated', async () => {
    const text = readFileSync(join(generated, 'jest.json.txt'), 'utf8');
    const result = await parseReport(text.slice(0, Math.floor(text.length * 0.6)), { format: 'jest' });
    expect(result.truncated).toBe(true);
    expect(result.tests.length).toBeGreaterThan(0);
  });
});

describe('helpers', () => {
  it('scanJson yields selected values across chunk boundaries, strings with braces and escapes included', async () => {
    const doc = JSON.stringify({ a: [{ x: 'a}b"c{' }, { x: 2 }], b: { c: [1, 2] }, d: 'x' });
    const out: unknown[] = [];
    for await (const r of scanJson(pieces(doc, 3), (p) => (p.length === 2 && p[0] === 'a') || p[0] === 'd'))
      out.push(r.value);
    expect(out).toEqual([{ x: 'a}b"c{' }, { x: 2 }, 'x']);
  });

  it('gradleId and joinDescriptions', () => {
    expect(gradleId('a.B > m()')).toBe('a.B.m()');
    expect(gradleId('a.B > Inner > m()')).toBe('a.B$Inner.m()');
    expect(joinDescriptions(['Calc', '#add', 'with x', 'works'])).toBe('Calc#add with x works');
  });

  it("detection picks each generated report's runner", async () => {
    for (const [file, expected] of Object.entries(EXPECTED)) {
      const head = readFileSync(join(generated, file), 'utf8').slice(0, 65536);
      expect(detectParser(head)?.name, file).toBe(expected.format);
    }
  });

  it('chunksOf input and file input agree', async () => {
    const text = readFileSync(join(generated, 'cargo-test.txt'), 'utf8');
    const a = await getParser('cargo').parse(chunksOf(text));
    const b = await parseFile(generated, 'cargo-test.txt');
    expect(a.tests).toEqual(b.tests);
  });
});

describe('JSON reports after a banner', () => {
  it('npm prints its banner before `jest --json`: the report is still read as JSON', async () => {
    const json = readFileSync(join(generated, 'jest.json.txt'), 'utf8');
    const text = `\n> calc@1.0.0 test\n> jest --json --ci\n\n${json}`;
    const result = await parseReport(text, { format: 'jest' });
    const plain = await parseFile(generated, 'jest.json.txt');
    expect(statusMap(result)).toEqual(statusMap(plain));
  });

  it('mocha JSON and RSpec JSON after other output', async () => {
    for (const [file, format] of [
      ['mocha.json.txt', 'mocha'],
      ['rspec.json.txt', 'rspec'],
    ] as const) {
      const json = readFileSync(join(generated, file), 'utf8');
      const result = await parseReport(`Warning: something [1] {odd}\n${json}`, { format });
      const plain = await parseFile(generated, file);
      expect(statusMap(result), file).toEqual(statusMap(plain));
      expect(result.tests.length).toBeGreaterThan(3);
    }
  });
});
