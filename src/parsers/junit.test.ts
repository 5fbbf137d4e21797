import {
  createReadStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { chunksOf } from './common.ts';
import { CapturedOutputFilter, detectJUnit, junitTestId, parseJUnit } from './junit.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/junit');
const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
const hasData = existsSync(path.join(data, 'reports/junit'));

const fromFile = (file: string, keepElements = false) =>
  parseJUnit(createReadStream(file), { sourceName: path.basename(file), keepElements });
const fromText = (text: string, keepElements = false) =>
  parseJUnit(chunksOf(text), { sourceName: 'x.xml', keepElements });
const statusMap = (tests: { id: string; status: string }[]) =>
  Object.fromEntries(tests.map((t) => [t.id, t.status]));

describe.skipIf(!hasData)(
  'JUnit XML: EnricoMi/publish-unit-test-result-action agreement (BERTH_DATA)',
  () => {
    const dir = path.join(data, 'reports/junit/enricomi');
    const files = hasData ? readdirSync(dir).filter((f) => f.endsWith('.results.json')) : [];
    it('has the expected files', () => expect(files.length).toBeGreaterThanOrEqual(12));
    for (const resultsFile of files) {
      it(`${resultsFile.replace('.results.json', '.xml')} gives the tool's test, failure, error and skip counts`, async () => {
        const stats = JSON.parse(readFileSync(path.join(dir, resultsFile), 'utf8')).stats;
        const result = await fromFile(path.join(dir, resultsFile.replace('.results.json', '.xml')));
        // That tool counts unique (classname, name) tests, the most severe result winning; a
        // report without testcase elements is counted from its suites' attributes.
        const counts =
          result.elementCount === 0 && result.declared
            ? result.declared
            : { tests: result.tests.length, ...result.counts };
        expect({
          tests: counts.tests,
          failed: counts.failed,
          error: counts.error,
          skipped: counts.skipped,
        }).toEqual({
          tests: stats.tests,
          failed: stats.tests_fail,
          error: stats.tests_error,
          skipped: stats.tests_skip,
        });
        expect(counts.passed).toBe(stats.tests_succ);
      });
    }
    it('a corrupt (truncated) file gives a parse error naming the file and line', async () => {
      const error = await fromFile(path.join(dir, 'pytest_corrupt-xml.xml')).catch((e) => e);
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).toMatch(/^pytest_corrupt-xml\.xml:\d+: not well-formed XML/);
    });
    it('a non-JUnit XML file gives a parse error naming the root element', async () => {
      const error = await fromFile(path.join(dir, 'non-junit.xml')).catch((e) => e);
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).toContain('non-junit.xml');
      expect(error.message).toContain('<suites>');
    });
    it('surefire Pulsar report: 808 testcases, TestNG duplicates merged by precedence', async () => {
      const result = await fromFile(path.join(data, 'reports/junit/surefire/pulsar-test-report.xml'), true);
      expect(result.elementCount).toBe(808);
      expect(result.elements).toHaveLength(808);
      const map = statusMap(result.tests);
      // Skipped first, then failed in the same suite: not a retry, FAILED wins.
      expect(map['org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings']).toBe('FAILED');
      expect(result.counts.failed).toBe(1);
    });
  },
);

describe.skipIf(!hasData)('JUnit XML: attack files (BERTH_DATA)', () => {
  for (const name of ['testXxe-xxe.xml', 'testXxe-oob.xml']) {
    it(`${name} is refused without resolving anything`, async () => {
      const error = await fromFile(path.join(data, 'reports/junit/security', name)).catch((e) => e);
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).toContain(name);
    });
  }
});

describe('JUnit XML: real reports verified by hand', () => {
  it('Gradle JUnit 5 Kotlin: spaces and () in names, skipped, failed, exception', async () => {
    const result = await fromFile(path.join(fixtures, 'TEST-org.test.sample.SampleTestSuite.xml'));
    expect(statusMap(result.tests)).toEqual({
      'org.test.sample.SampleTestSuite.a test skipped()': 'SKIPPED',
      'org.test.sample.SampleTestSuite.a test that passes()': 'PASSED',
      'org.test.sample.SampleTestSuite.a test that fails()': 'FAILED',
      'org.test.sample.SampleTestSuite.a test that throws an exception()': 'FAILED',
    });
    const fails = result.tests.find((t) => t.id.endsWith('a test that fails()'));
    expect(fails?.message).toBe('org.opentest4j.AssertionFailedError: this test has failed');
  });
  it('Gradle test-retry: two failed attempts then a pass is PASSED, flaky, 3 attempts', async () => {
    const result = await fromFile(path.join(fixtures, 'TEST-org.test.sample.FlakyTestSuite.xml'), true);
    expect(result.tests).toHaveLength(1);
    expect(result.tests[0]).toMatchObject({
      id: 'org.test.sample.FlakyTestSuite.flakyTest()',
      status: 'PASSED',
      flaky: true,
      attempts: 3,
    });
    expect(result.elements?.map((e) => e.status)).toEqual(['FAILED', 'FAILED', 'PASSED']);
  });
  it('surefire flakyFailure: passed on rerun is PASSED with a flaky note', async () => {
    const result = await fromFile(path.join(fixtures, 'TEST-io.olamy.FlakyTest.xml'));
    expect(result.tests).toEqual([
      expect.objectContaining({ id: 'io.olamy.FlakyTest.testApp', status: 'PASSED', flaky: true, reruns: 2 }),
    ]);
    expect(result.warnings.join('\n')).toMatch(/surefire rerun/);
  });
  it('cargo-nextest', async () => {
    const result = await fromFile(path.join(fixtures, 'nextest-basic.xml'));
    expect(statusMap(result.tests)).toEqual({
      'oxidized_navigation::parry3d.test_failure': 'FAILED',
      'oxidized_navigation::parry3d.test_simple_navigation': 'PASSED',
      'oxidized_navigation::parry3d.test_annotations': 'PASSED',
    });
    expect(result.tests[0]?.message).toBe("thread 'test_failure' panicked at tests/parry3d.rs:154:5:");
  });
  it('pytest --junitxml: parameterised ids, skip, xfail, custom classname', async () => {
    const result = await fromFile(path.join(fixtures, 'python-xunit-pytest.xml'));
    expect(statusMap(result.tests)).toEqual({
      'tests.test_lib.test_always_pass': 'PASSED',
      'tests.test_lib.test_with_subtests': 'PASSED',
      'tests.test_lib.test_parameterized[param1]': 'PASSED',
      'tests.test_lib.test_parameterized[param2]': 'PASSED',
      'tests.test_lib.test_always_skip': 'SKIPPED',
      'tests.test_lib.test_always_fail': 'FAILED',
      'tests.test_lib.test_expected_failure': 'SKIPPED',
      'tests.test_lib.test_error': 'FAILED',
      'tests.test_lib.test_with_record_property': 'PASSED',
      'custom_classname.test_with_record_xml_attribute': 'PASSED',
    });
    expect(result.tests.find((t) => t.id.endsWith('test_expected_failure'))?.xfail).toBe(true);
    expect(result.tests.find((t) => t.id.endsWith('test_always_fail'))?.message).toBe('assert False');
    // The suite header says 15 tests (it counts subtests); the elements are what counts.
    expect(result.declared?.tests).toBe(15);
  });
});

describe('JUnit XML: ids, dialects and encodings', () => {
  it('builds ids from classname and name; strips JVM identity hashes only', () => {
    expect(junitTestId('a.B', 'c', 1)).toBe('a.B.c');
    expect(junitTestId('', 'Mount iframe', 1)).toBe('Mount iframe');
    expect(junitTestId(undefined, undefined, 7)).toBe('(unnamed testcase #7)');
    expect(junitTestId('a.B@1b2c3d4e', 'c@6d06d69c', 1)).toBe('a.B.c');
    expect(junitTestId('a.B', 'preserve fields order with @ColumnName', 1)).toBe(
      'a.B.preserve fields order with @ColumnName',
    );
    expect(junitTestId('a.B', 'uses @cafe', 1)).toBe('a.B.uses @cafe');
  });

  it('keeps $, spaces, (), brackets and astral characters in names', async () => {
    const xml = `<testsuite name="s">
      <testcase classname="io.x.CanBeNonNullableSpec$nullable function parameters$if-statements" name="does not report guard()"/>
      <testcase classname="k.T" name="method(int, String)[1] 😀 𝒳"/>
      <testcase classname="k.T" name="a &amp; b &lt;c&gt; &#x1F600;"/>
    </testsuite>`;
    const result = await fromText(xml);
    expect(result.tests.map((t) => t.id)).toEqual([
      'io.x.CanBeNonNullableSpec$nullable function parameters$if-statements.does not report guard()',
      'k.T.method(int, String)[1] 😀 𝒳',
      'k.T.a & b <c> 😀',
    ]);
  });

  it('reads nested suites under a <testsuites> root, PHPUnit incomplete, jest-junit empty classname', async () => {
    const xml = `<?xml version="1.0"?>
<testsuites><testsuite name="All"><testsuite name="Unit" file="/p/tests">
  <testsuite name="FooTest" file="/p/tests/FooTest.php">
    <testcase name="testOk" class="FooTest" classname="FooTest" file="/p/tests/FooTest.php" line="5" assertions="1" time="0.01"/>
    <testcase name="testLater" class="FooTest" classname="FooTest" assertions="0" time="0"><incomplete/></testcase>
    <testcase name="testData with data set #0" class="FooTest" classname="FooTest"><error type="TypeError">TypeError: boom
more</error></testcase>
  </testsuite></testsuite>
  <testcase classname="" name="Load widget via link" time="0.272"></testcase>
</testsuite></testsuites>`;
    const result = await fromText(xml);
    expect(statusMap(result.tests)).toEqual({
      'FooTest.testOk': 'PASSED',
      'FooTest.testLater': 'SKIPPED',
      'FooTest.testData with data set #0': 'ERROR',
      'Load widget via link': 'PASSED',
    });
    expect(result.tests.find((t) => t.status === 'ERROR')?.message).toBe('TypeError: boom');
    expect(result.tests[0]).toMatchObject({ durationSec: 0.01, file: '/p/tests/FooTest.php' });
  });

  it('surefire rerunFailure beside a failure stays FAILED with its rerun count', async () => {
    const xml = `<testsuite name="T"><testcase classname="a.T" name="t">
      <failure message="third time">x</failure><rerunFailure message="first"/><rerunFailure message="second"/>
    </testcase><testcase classname="a.T" name="u"><flakyError message="e"/></testcase></testsuite>`;
    const result = await fromText(xml);
    expect(result.tests).toEqual([
      expect.objectContaining({ id: 'a.T.t', status: 'FAILED', reruns: 2, message: 'third time' }),
      expect.objectContaining({ id: 'a.T.u', status: 'PASSED', flaky: true, reruns: 1 }),
    ]);
  });

  it('duplicates across suites merge by ERROR > FAILED > PASSED > SKIPPED; keepElements keeps each', async () => {
    const xml = `<testsuites>
      <testsuite name="a"><testcase classname="c" name="x"/><testcase classname="c" name="y"><skipped/></testcase></testsuite>
      <testsuite name="b"><testcase classname="c" name="x"><failure/></testcase><testcase classname="c" name="y"/></testsuite>
      <testsuite name="c"><testcase classname="c" name="x"/><testcase classname="c" name="z"><skipped/><failure/></testcase></testsuite>
    </testsuites>`;
    const result = await fromText(xml, true);
    expect(statusMap(result.tests)).toEqual({ 'c.x': 'FAILED', 'c.y': 'PASSED', 'c.z': 'FAILED' });
    expect(result.elements?.map((e) => [e.id, e.status, e.suite])).toEqual([
      ['c.x', 'PASSED', 'a'],
      ['c.y', 'SKIPPED', 'a'],
      ['c.x', 'FAILED', 'b'],
      ['c.y', 'PASSED', 'b'],
      ['c.x', 'PASSED', 'c'],
      ['c.z', 'FAILED', 'c'],
    ]);
    expect(result.elements?.[5]).toMatchObject({ hasSkipped: true, hasFailure: true, hasError: false });
  });

  it('a pass followed by a failure in one suite is not a retry', async () => {
    const xml = `<testsuite><testcase classname="c" name="x"/><testcase classname="c" name="x"><failure/></testcase></testsuite>`;
    expect(statusMap((await fromText(xml)).tests)).toEqual({ 'c.x': 'FAILED' });
  });

  it('handles a UTF-8 BOM, CRLF line ends and bytes split anywhere', async () => {
    const xml =
      '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\r\n<testsuite name="s">\r\n<testcase classname="k" name="é 😀"/>\r\n</testsuite>\r\n';
    const bytes = new TextEncoder().encode(xml);
    async function* oneByteAtATime() {
      for (const b of bytes) yield new Uint8Array([b]);
    }
    const result = await parseJUnit(oneByteAtATime(), { sourceName: 'bom.xml' });
    expect(result.tests.map((t) => t.id)).toEqual(['k.é 😀']);
    expect(result.warnings).toEqual([]);
  });

  it('reads UTF-16 with a BOM', async () => {
    const xml = '<testsuite><testcase classname="k" name="ü"/></testsuite>';
    const body = Buffer.from(xml, 'utf16le');
    const result = await parseJUnit(chunksOf(Buffer.concat([Buffer.from([0xff, 0xfe]), body])), {
      sourceName: 'u16.xml',
    });
    expect(result.tests.map((t) => t.id)).toEqual(['k.ü']);
  });

  it('invalid UTF-8 is replaced and reported, not fatal', async () => {
    const head = Buffer.from('<testsuite><testcase classname="k" name="a');
    const tail = Buffer.from('b"/></testsuite>');
    const result = await parseJUnit(chunksOf(Buffer.concat([head, Buffer.from([0xc3, 0x28, 0xff]), tail])), {
      sourceName: 'bad.xml',
    });
    expect(result.tests).toHaveLength(1);
    expect(result.tests[0]?.id).toMatch(/^k\.a\uFFFD.*b$/);
    expect(result.warnings.join()).toMatch(/not valid UTF-8/);
  });

  it('empty and whitespace-only inputs are clear errors naming the file', async () => {
    await expect(parseJUnit(chunksOf(''), { sourceName: 'empty.xml' })).rejects.toThrow(
      /^empty\.xml: the file is empty/,
    );
    await expect(parseJUnit(chunksOf('  \n'), { sourceName: 'blank.xml' })).rejects.toThrow(/^blank\.xml/);
    await expect(fromText('<testsuite><testcase name="a">')).rejects.toThrow(/x\.xml:1: not well-formed XML/);
  });

  it('detects JUnit from the first bytes', () => {
    expect(detectJUnit('<?xml version="1.0"?>\n<!-- c -->\n<testsuites>')).toBeGreaterThan(0.9);
    expect(detectJUnit('\uFEFF<testsuite name="x">')).toBeGreaterThan(0.9);
    // Other XML scores low but above the threshold: the JUnit parser refuses it with a clear message.
    expect(detectJUnit('<?xml version="1.0"?><suites>')).toBe(0.4);
    expect(detectJUnit('PASSED tests/test_a.py::test_x')).toBe(0);
  });
});

describe('JUnit XML: entity attacks', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-junit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('never reads a local file named by an external entity', async () => {
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'TOP-SECRET-CONTENT');
    const xml = `<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file://${secret}">]>
<testsuite><testcase classname="k" name="&xxe;"/></testsuite>`;
    const error = await fromText(xml).catch((e) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(String(error.message)).not.toContain('TOP-SECRET');
    // Inside text content too: refused, nothing read.
    const xml2 = xml
      .replace('name="&xxe;"/>', 'name="a"><failure>&xxe;</failure></testcase>')
      .replace('</testcase></testcase>', '</testcase>');
    const error2 = await fromText(xml2).catch((e) => e);
    expect(error2).toBeInstanceOf(InputError);
    expect(JSON.stringify(error2)).not.toContain('TOP-SECRET');
  });

  it('does not expand an entity bomb and stays small', async () => {
    let dtd = '<!ENTITY lol0 "lollollollollollollollollollol">';
    for (let i = 1; i <= 9; i++) dtd += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
    const xml = `<?xml version="1.0"?><!DOCTYPE testsuite [${dtd}]><testsuite><testcase classname="k" name="&lol9;"/></testsuite>`;
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const error = await fromText(xml).catch((e) => e);
    const grown = process.memoryUsage().heapUsed - before;
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toMatch(/x\.xml:1: not well-formed XML: .*entity/i);
    expect(grown).toBeLessThan(50 * 1024 * 1024);
  });
});

describe('JUnit XML: captured output is skipped in bounded memory', () => {
  const doc = `<testsuites><testsuite name="s">
<system-out><![CDATA[suite
output]]></system-out>
<testcase classname="k" name="a"><failure><![CDATA[expected <system-out> to
be closed]]></failure><system-out>line 1
line 2 <b>not xml</b> &amp; more</system-out><system-err/></testcase>
<!-- <system-err> in a comment -->
<testcase classname="k" name="b"><system-err attr="x">err</system-err></testcase>
</testsuite></testsuites>`;

  it('drops only the content of system-out/err, keeping CDATA and comments intact, across any split', async () => {
    for (const size of [1, 2, 3, 7, 16, 1000]) {
      async function* pieces() {
        for (let i = 0; i < doc.length; i += size) yield doc.slice(i, i + size);
      }
      const result = await parseJUnit(pieces(), { sourceName: 'split.xml' });
      expect(statusMap(result.tests), `chunk size ${size}`).toEqual({ 'k.a': 'FAILED', 'k.b': 'PASSED' });
      expect(result.tests[0]?.message).toBe('expected <system-out> to');
    }
    const filter = new CapturedOutputFilter();
    let out = '';
    for (const ch of doc) out += filter.push(ch);
    out += filter.flush();
    expect(out).not.toContain('line 2');
    expect(out).toContain('<system-out>\n</system-out>');
    expect(out).toContain('<![CDATA[expected <system-out> to\nbe closed]]>');
    expect(out.split('\n')).toHaveLength(doc.split('\n').length);
  });

  it('keeps line numbers right after dropped output', async () => {
    const bad =
      '<testsuite><testcase name="a"><system-out>1\n2\n3\n</system-out></testcase>\n<testcase name="b" x=></testsuite>';
    await expect(fromText(bad)).rejects.toThrow(/x\.xml:5: not well-formed XML/);
  });

  it('a 300 MB system-out does not grow the heap', async () => {
    const line = `${'output that a chatty test printed '.repeat(30)}\n`;
    const block = line.repeat(Math.ceil((1 << 20) / line.length));
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    async function* huge() {
      yield '<testsuite><testcase classname="k" name="chatty"><system-out>';
      // A fresh string per chunk, as a file read gives; the heap is sampled between chunks.
      for (let i = 0; i < 300; i++) {
        yield `${i} ${block}`;
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      yield '</system-out></testcase><testcase classname="k" name="after"><skipped/></testcase></testsuite>';
    }
    const result = await parseJUnit(huge(), { sourceName: 'huge.xml' });
    expect(statusMap(result.tests)).toEqual({ 'k.chatty': 'PASSED', 'k.after': 'SKIPPED' });
    expect(peak - before).toBeLessThan(100 * 1024 * 1024);
  });
});
