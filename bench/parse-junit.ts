/**
 * JUnit XML parsing speed and memory.
 *
 *   npx tsx bench/parse-junit.ts [--mb 100] [--gb 1] [--keep]
 *
 * Builds a large real-shaped report by repeating the real testcases of
 * `test/fixtures/junit/` (Gradle, surefire, nextest, pytest; failures with
 * stack traces, system-out, CDATA) and, when `BERTH_DATA` holds it, the Apache
 * Pulsar surefire report under fresh class names, then measures in
 * one run:
 *   - reading the same bytes (baseline 1),
 *   - a bare fast-xml-parser parse of the whole document (baseline 2),
 *   - berth's streaming parser (`parseJUnit`, saxes),
 * and prints MB/s and ratios. Then it writes a file of `--gb` GiB and parses it
 * in a child process, printing that process's peak RSS.
 * Targets: berth within 1.5x of the bare parse; peak RSS under 200 MB.
 */
import { spawnSync } from 'node:child_process';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';
import { parseJUnit } from '../src/parsers/junit.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};

// Child mode: parse one file and report counts and peak memory.
if (args[0] === '--child') {
  const file = args[1] as string;
  const started = performance.now();
  const result = await parseJUnit(createReadStream(file), { sourceName: file });
  const seconds = (performance.now() - started) / 1000;
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(
    `${JSON.stringify({ seconds, maxRssMb, tests: result.tests.length, counts: result.counts })}\n`,
  );
  process.exit(0);
}

/** The testcase elements of the fixtures, as written. */
function realTestcases(): string[] {
  const dir = path.join(root, 'test/fixtures/junit');
  const files = readdirSync(dir)
    .filter((x) => x.endsWith('.xml'))
    .map((f) => path.join(dir, f));
  // The Maven surefire report of Apache Pulsar (808 testcases), when the shared data is there.
  const data = process.env.BERTH_DATA ?? path.resolve(root, '../shared/data');
  const pulsar = path.join(data, 'reports/junit/surefire/pulsar-test-report.xml');
  if (existsSync(pulsar)) files.push(pulsar);
  const cases: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/<testcase\b[^>]*?\/>|<testcase\b[^>]*[^/]>[\s\S]*?<\/testcase>/g))
      cases.push(m[0]);
  }
  return cases;
}

/**
 * Writes a `<testsuites>` file of about `bytes` bytes; returns the real size.
 * Suite N renames every class to `<class>.S<N % distinctSuites>`, so the file holds
 * at most `distinctSuites` x (real testcases) distinct test ids.
 */
async function generate(
  file: string,
  bytes: number,
  distinctSuites = Number.POSITIVE_INFINITY,
): Promise<number> {
  const cases = realTestcases();
  const out = createWriteStream(file);
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve()));
  let written = 0;
  await write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n');
  for (let suite = 0; written < bytes; suite++) {
    let chunk = `<testsuite name="org.example.gen.Suite${suite}" tests="${cases.length}">\n`;
    for (const c of cases) {
      chunk += `${c.replace(/classname="([^"]*)"/, `classname="$1.S${suite % distinctSuites}"`)}\n`;
    }
    chunk += '</testsuite>\n';
    written += Buffer.byteLength(chunk);
    await write(chunk);
  }
  await write('</testsuites>\n');
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return statSync(file).size;
}

const mb = (n: number) => n / (1024 * 1024);
async function time<T>(fn: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { seconds: (performance.now() - started) / 1000, value };
}

const dir = mkdtempSync(path.join(tmpdir(), 'berth-bench-junit-'));
try {
  const big = path.join(dir, 'big.xml');
  const size = await generate(big, arg('--mb', 100) * 1024 * 1024);
  console.log(`generated ${mb(size).toFixed(1)} MB from ${realTestcases().length} real testcases`);

  const read = await time(async () => {
    let n = 0;
    for await (const chunk of createReadStream(big)) n += (chunk as Buffer).length;
    return n;
  });
  const fxp = await time(async () => {
    const text = await readFile(big, 'utf8');
    const parser = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '',
      isArray: (name) => ['testsuite', 'testcase'].includes(name),
    });
    const doc = parser.parse(text) as { testsuites: { testsuite: { testcase: unknown[] }[] } };
    return doc.testsuites.testsuite.reduce((n, s) => n + s.testcase.length, 0);
  });
  const ours = await time(() => parseJUnit(createReadStream(big), { sourceName: big }));

  const rate = (s: number) => `${(mb(size) / s).toFixed(1)} MB/s`;
  console.log(`read bytes        ${read.seconds.toFixed(2)} s  ${rate(read.seconds)}`);
  console.log(
    `fast-xml-parser   ${fxp.seconds.toFixed(2)} s  ${rate(fxp.seconds)}  (${fxp.value} testcases, whole document)`,
  );
  console.log(
    `berth parseJUnit  ${ours.seconds.toFixed(2)} s  ${rate(ours.seconds)}  (${ours.value.elementCount} testcases, ${ours.value.tests.length} ids)`,
  );
  const ratio = ours.seconds / fxp.seconds;
  console.log(
    `ratio berth / fast-xml-parser: ${ratio.toFixed(2)} (target <= 1.5) ${ratio <= 1.5 ? 'OK' : 'MISSED'}`,
  );
  console.log(`ratio berth / read: ${(ours.seconds / read.seconds).toFixed(1)}`);

  // Peak memory in a fresh process. The result map holds one entry per distinct id, so
  // memory follows the number of distinct tests, not the file size: both are shown.
  const child = (file: string) => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', file],
      {
        encoding: 'utf8',
        cwd: root,
        maxBuffer: 1 << 20,
      },
    );
    if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').pop() as string);
  };
  const small = child(big);
  console.log(
    `${mb(size).toFixed(0)} MB, ${small.tests} distinct ids: peak RSS ${small.maxRssMb.toFixed(0)} MB ` +
      `(${((small.maxRssMb * 1024) / small.tests).toFixed(2)} KB per distinct test, all included)`,
  );
  rmSync(big);

  const gb = arg('--gb', 1);
  if (gb > 0) {
    // A huge report is huge because of its output and repeated runs, not millions of distinct
    // tests: 100 distinct suites of the real testcases (about 83 000 ids), repeated to 1 GiB.
    const huge = path.join(dir, 'huge.xml');
    const hugeSize = await generate(huge, gb * 1024 * 1024 * 1024, 100);
    const r = child(huge);
    console.log(
      `${(hugeSize / 1024 ** 3).toFixed(2)} GiB: ${r.seconds.toFixed(1)} s (${(mb(hugeSize) / r.seconds).toFixed(1)} MB/s), ` +
        `${r.tests} distinct ids, peak RSS ${r.maxRssMb.toFixed(0)} MB (target < 200) ${r.maxRssMb < 200 ? 'OK' : 'MISSED'}`,
    );
  }
} finally {
  if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
