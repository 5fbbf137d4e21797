/**
 * Text-log parser speed and memory.
 *
 *   npx tsx bench/parse-text.ts [--mb 200] [--rss-mb 1024]
 *
 * 1. Writes a generated pytest log of `--mb` MB (default 200) to a temp file
 *    and measures, in the same run, the time to just read it as text (64 KiB
 *    chunks, UTF-8 decoded) and the time to parse it with the pytest parser
 *    from the same reader. Prints MB/s of wall time and MB per CPU-second (the
 *    fair figure on a shared machine) for both, and the ratio. Target: parsing
 *    at least 100 MB/s.
 * 2. Writes a generated log of `--rss-mb` MB (default 1024) to a temp file,
 *    parses it in a fresh child process and prints the child's peak RSS, its
 *    live heap after the parse, the same child's RSS on an empty file (node +
 *    tsx), and the peak with V8's old space capped at 128 MB (showing the parse
 *    fits a bounded heap; without a cap V8 lets garbage grow to a few times the
 *    live heap before collecting). Target: under 200 MB.
 *
 * The generated log looks like a long `pytest -v -rA` run: 200,000 distinct node
 * ids with parameters, captured output between results, a FAILURES section and
 * a short test summary.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileChunks } from '../src/parsers/common.ts';
import { pytestParser } from '../src/parsers/pytest.ts';

const MB = 1024 * 1024;
/** Read size: 64 KiB keeps each decoded chunk in V8's young generation (larger strings go straight to the old one). */
const CHUNK_BYTES = Number(process.env.BENCH_CHUNK ?? 64 * 1024);
const DISTINCT_TESTS = 200_000;

/** Yields about `totalBytes` of a generated pytest -v -rA log in ~64 KiB chunks. */
export function* generatePytestLog(totalBytes: number): Generator<string> {
  let written = 0;
  let buffer = '============================= test session starts ==============================\n';
  buffer += 'platform linux -- Python 3.11.2, pytest-8.3.3, pluggy-1.5.0 -- /usr/bin/python3\n';
  buffer += 'collecting ... collected 200000 items\n\n';
  const failures: number[] = [];
  const statuses = [
    'PASSED',
    'PASSED',
    'PASSED',
    'PASSED',
    'PASSED',
    'PASSED',
    'FAILED',
    'SKIPPED',
    'PASSED',
    'ERROR',
  ];
  let i = 0;
  const reserve = 4096; // room for the summary
  while (written + buffer.length < totalBytes - reserve) {
    const id = i % DISTINCT_TESTS;
    const status = statuses[id % statuses.length] as string;
    const pct = String(Math.floor((id * 100) / DISTINCT_TESTS)).padStart(3);
    buffer += `tests/pkg${id % 97}/test_module_${id % 31}.py::TestClass${id % 13}::test_case_${id}[param ${id % 7}-x] ${status} [${pct}%]\n`;
    if (status === 'FAILED' && failures.length < 1000) failures.push(id);
    if (i % 5 === 0) {
      for (let k = 0; k < 6; k++) {
        buffer += `2026-01-01 12:00:00,000 DEBUG worker.module_${k}: processed batch ${i}/${k} in 12.5 ms (cache hit ratio 0.93)\n`;
      }
    }
    i++;
    if (buffer.length >= 65536) {
      written += buffer.length;
      yield buffer;
      buffer = '';
    }
  }
  buffer += '\n=================================== FAILURES ===================================\n';
  buffer += '=========================== short test summary info ============================\n';
  for (const id of failures.slice(0, 20)) {
    buffer += `FAILED tests/pkg${id % 97}/test_module_${id % 31}.py::TestClass${id % 13}::test_case_${id}[param ${id % 7}-x] - AssertionError: 1 != 2\n`;
  }
  buffer += '============ 20000 failed, 160000 passed, 20000 skipped in 812.00s =============\n';
  yield buffer;
}

/** CPU seconds (user + system) this process used since `since`. */
function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

async function timeRead(file: string): Promise<{ seconds: number; cpu: number }> {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let bytes = 0;
  for await (const chunk of readFileChunks(file, CHUNK_BYTES)) bytes += chunk.length;
  if (bytes === 0) throw new Error('empty file');
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, cpu: cpuSeconds(cpu) };
}

async function timeParse(file: string): Promise<{ seconds: number; cpu: number; tests: number }> {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const result = await pytestParser.parse(
    process.env.BENCH_STREAM === '1' ? createReadStream(file) : readFileChunks(file, CHUNK_BYTES),
  );
  return {
    seconds: Number(process.hrtime.bigint() - start) / 1e9,
    cpu: cpuSeconds(cpu),
    tests: result.tests.length,
  };
}

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at !== -1 ? Number(process.argv[at + 1]) : fallback;
}

async function child(): Promise<void> {
  const file = process.argv[process.argv.indexOf('--child-rss') + 1] as string;
  const result = await pytestParser.parse(
    process.env.BENCH_STREAM === '1' ? createReadStream(file) : readFileChunks(file, CHUNK_BYTES),
  );
  const usage = process.resourceUsage();
  (globalThis as { gc?: () => void }).gc?.();
  const liveHeapMB = process.memoryUsage().heapUsed / MB;
  process.stdout.write(
    `${JSON.stringify({ maxRssKiB: usage.maxRSS, liveHeapMB, tests: result.tests.length, truncated: result.truncated })}\n`,
  );
}

async function main(): Promise<void> {
  const sizeMb = argument('--mb', 200);
  const rssMb = argument('--rss-mb', 1024);
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-text-'));
  try {
    const file = join(dir, 'pytest.log');
    await writeLog(file, sizeMb * MB);
    const size = (await stat(file)).size / MB;

    // Warm the page cache and the JIT once, then take the best of three.
    await timeRead(file);
    const reads: Array<{ seconds: number; cpu: number }> = [];
    const parses: Array<{ seconds: number; cpu: number }> = [];
    let tests = 0;
    for (let round = 0; round < 3; round++) {
      reads.push(await timeRead(file));
      const parsed = await timeParse(file);
      parses.push(parsed);
      tests = parsed.tests;
    }
    const best = (runs: Array<{ seconds: number; cpu: number }>, key: 'seconds' | 'cpu') =>
      Math.min(...runs.map((r) => r[key]));
    const [read, parse] = [best(reads, 'seconds'), best(parses, 'seconds')];
    const [readCpu, parseCpu] = [best(reads, 'cpu'), best(parses, 'cpu')];
    console.log(`pytest log: ${size.toFixed(1)} MB, ${tests} distinct tests (best of 3)`);
    console.log(
      `  read only (64 KiB chunks, decoded): ${(size / read).toFixed(0)} MB/s wall, ${(size / readCpu).toFixed(0)} MB per CPU-second`,
    );
    console.log(
      `  parse                             : ${(size / parse).toFixed(0)} MB/s wall, ${(size / parseCpu).toFixed(0)} MB per CPU-second  target >= 100 MB/s`,
    );
    console.log(
      `  ratio: parse takes ${(parse / read).toFixed(1)}x the wall time of reading, ${(parseCpu / readCpu).toFixed(1)}x its CPU time`,
    );
    console.log(
      `  load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}: on a shared machine the CPU-time figure is the fairer one`,
    );
    await rm(file);

    // Peak memory: a fresh process parses a file of `--rss-mb` MB; its baseline
    // (the same process parsing an empty file) is printed beside it.
    const big = join(dir, 'big.log');
    await writeLog(big, rssMb * MB);
    const empty = join(dir, 'empty.log');
    await writeFile(empty, '');
    const base = measureChild(empty);
    const measured = measureChild(big);
    const capped = measureChild(big, ['--max-old-space-size=128']);
    console.log(
      `peak RSS parsing a ${rssMb} MB generated pytest log: ${(measured.maxRssKiB / 1024).toFixed(0)} MB (${measured.tests} tests; live heap after the parse ${measured.liveHeapMB.toFixed(0)} MB; the same process on an empty log: ${(base.maxRssKiB / 1024).toFixed(0)} MB)  target < 200 MB`,
    );
    console.log(
      `  the same with V8's old space capped at 128 MB (--max-old-space-size=128): ${(capped.maxRssKiB / 1024).toFixed(0)} MB`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function measureChild(
  file: string,
  flags: string[] = [],
): { maxRssKiB: number; liveHeapMB: number; tests: number } {
  const self = fileURLToPath(import.meta.url);
  const run = spawnSync(
    process.execPath,
    [...flags, '--expose-gc', '--import', 'tsx', self, '--child-rss', file],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as {
    maxRssKiB: number;
    liveHeapMB: number;
    tests: number;
  };
}

async function writeLog(file: string, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  for (const chunk of generatePytestLog(bytes)) {
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

if (process.argv.includes('--child-rss')) await child();
else await main();
