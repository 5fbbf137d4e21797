import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { maybeGunzip, readReportText } from './gzip.ts';
import { parseReport } from './registry.ts';

const fixtures = join(import.meta.dirname, '../../test/fixtures');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'berth-gzip-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes `gzip(bytes)` under `name` and returns its path. */
async function gzipped(name: string, bytes: Uint8Array): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, gzipSync(bytes));
  return file;
}

describe('parseReport on gzip-compressed files', () => {
  it('detects and parses a gzipped pytest log (.gz) exactly like the plain file', async () => {
    const plainPath = join(fixtures, 'parsers/pytest_faillogs.log');
    const plain = await parseReport({ path: plainPath });
    const file = await gzipped('pytest_faillogs.log.gz', readFileSync(plainPath));
    const result = await parseReport({ path: file });
    expect(result.format).toBe('pytest');
    expect(result.counts).toEqual({ passed: 12, failed: 1, error: 0, skipped: 1 });
    expect(result.tests).toEqual(plain.tests);
    expect(result.truncated).toBe(false);
  });

  it('detects gzip by its magic bytes, not the name: a JUnit XML report without .gz', async () => {
    const xml = readFileSync(join(fixtures, 'junit/python-xunit-pytest.xml'));
    const file = await gzipped('report-no-extension', xml);
    const result = await parseReport({ path: file }, { format: 'junit' });
    const plain = await parseReport(xml, { format: 'junit' });
    expect(result.counts).toEqual(plain.counts);
    expect(result.counts.passed + result.counts.failed).toBeGreaterThan(0);
    expect(result.tests.map((t) => t.id)).toEqual(plain.tests.map((t) => t.id));
  });

  it('gzipped bytes given directly are decompressed too; text is never taken for gzip', async () => {
    const tap = readFileSync(join(fixtures, 'parsers/tap-todo.tap'));
    const fromBytes = await parseReport(gzipSync(tap));
    const fromText = await parseReport(tap.toString('utf8'));
    expect(fromBytes.format).toBe('tap');
    expect(fromBytes.tests).toEqual(fromText.tests);
  });

  it('gzip data cut short: what it holds is parsed, and the result is truncated with a warning', async () => {
    const log = readFileSync(join(fixtures, 'parsers/pytest_verbose.log'));
    const whole = gzipSync(log);
    const file = join(dir, 'cut.log.gz');
    await writeFile(file, whole.subarray(0, Math.floor(whole.length * 0.8)));
    const result = await parseReport({ path: file }, { format: 'pytest' });
    expect(result.truncated).toBe(true);
    expect(result.warnings.join('\n')).toMatch(/gzip data ends early/);
  });

  it('corrupt gzip data is an InputError naming the file', async () => {
    const file = join(dir, 'corrupt.log.gz');
    const good = gzipSync(readFileSync(join(fixtures, 'parsers/pytest_verbose.log')));
    const bad = Buffer.from(good);
    for (let i = 12; i < bad.length - 8; i += 7) bad[i] = (bad[i] as number) ^ 0xa5;
    await writeFile(file, bad);
    for (const format of ['pytest', undefined]) {
      const error = await parseReport({ path: file }, { format }).catch((e) => e);
      expect(error).toBeInstanceOf(InputError);
      expect(error.exitCode).toBe(2);
      expect(error.message).toMatch(/corrupt\.log\.gz: .*not valid gzip data/);
    }
  });
});

describe('readReportText', () => {
  it('gives the text of a plain or gzipped log; more than the cap is an InputError naming the file', async () => {
    const plainPath = join(fixtures, 'parsers/pytest_faillogs.log');
    const text = readFileSync(plainPath, 'utf8');
    const file = await gzipped('whole.log.gz', readFileSync(plainPath));
    expect(await readReportText(file)).toBe(text);
    expect(await readReportText(plainPath)).toBe(text);
    const error = await readReportText(file, 1024).catch((e) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toMatch(/whole\.log\.gz: .*more than .* MiB/);
  });
});

describe('maybeGunzip streams', () => {
  it('reads the compressed source only as far as the consumer gets (bounded memory)', async () => {
    // About 45 MB of log whose lines differ (so it compresses to a few MB, far more than any
    // stream buffer: Node 22 buffers 64 KiB where Node 20 buffered 16 KiB); fed in 1 KiB chunks.
    const lines: string[] = [];
    for (let i = 0; i < 1_000_000; i++)
      lines.push(`tests/test_x.py::test_case_${(i * 7919) % 1_000_003} PASSED\n`);
    const compressed = gzipSync(Buffer.from(lines.join('')));
    const chunk = 1024;
    let pulled = 0;
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < compressed.length; at += chunk) {
        pulled++;
        yield compressed.subarray(at, at + chunk);
      }
    }
    let out = 0;
    for await (const piece of maybeGunzip(source(), 'x.gz')) {
      out += piece.length;
      if (out > 1 << 20) break;
    }
    const total = Math.ceil(compressed.length / chunk);
    expect(out).toBeGreaterThan(1 << 20);
    expect(pulled).toBeLessThan(total / 4);
  });

  it('passes plain bytes through unchanged, even a 1-byte first chunk', async () => {
    async function* source(): AsyncGenerator<Uint8Array> {
      yield Buffer.from([0x1f]);
      yield Buffer.from('rest');
    }
    const parts: Uint8Array[] = [];
    for await (const piece of maybeGunzip(source(), 'x')) parts.push(piece as Uint8Array);
    expect(Buffer.concat(parts)).toEqual(Buffer.concat([Buffer.from([0x1f]), Buffer.from('rest')]));
  });
});

const dataDir = process.env.BERTH_DATA ?? join(import.meta.dirname, '../../../shared/data');
const goDir = join(dataDir, 'reports/go-test');
describe.skipIf(!existsSync(goDir))('gzipped real go test logs (BERTH_DATA)', () => {
  it('parse the same as the plain logs', async () => {
    const logs = readdirSync(goDir)
      .filter((f) => f.endsWith('.txt'))
      .slice(0, 5);
    expect(logs.length).toBeGreaterThan(0);
    for (const name of logs) {
      const bytes = readFileSync(join(goDir, name));
      const plain = await parseReport(bytes, { format: 'go-test' });
      const file = await gzipped(`${name}.gz`, bytes);
      const result = await parseReport({ path: file }, { format: 'go-test' });
      expect(result.tests, name).toEqual(plain.tests);
    }
  });
});
