import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, pipeline, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { boundTar, TarBoundError } from './tar-bound.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A folder `work` with `files` (path -> content, or a number: a sparse file of that size). */
function folder(files: Record<string, string | number>): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-tar-bound-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, 'work', path);
    mkdirSync(join(file, '..'), { recursive: true });
    if (typeof content === 'number') {
      writeFileSync(file, '');
      truncateSync(file, content);
    } else writeFileSync(file, content);
  }
  return dir;
}

/**
 * GNU tar's stream of `dir/work` (no --sparse: holes stored as zeros, as Docker's engine stores
 * them) through `boundTar(cap)`: the bytes that came out, and the error it ended with.
 */
async function through(
  dir: string,
  format: 'gnu' | 'posix',
  cap: number,
): Promise<{ out: Buffer; whole: Buffer | undefined; error: Error | undefined; seconds: number }> {
  const started = performance.now();
  const tar = spawn('tar', ['--create', `--format=${format}`, '--file=-', '--directory', dir, 'work'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const bound = boundTar(cap);
  const chunks: Buffer[] = [];
  const copy: Buffer[] = [];
  const tee = new PassThrough();
  tee.on('data', (chunk: Buffer) => copy.push(chunk));
  const error = await new Promise<Error | undefined>((resolve) => {
    bound.on('data', (chunk: Buffer) => chunks.push(chunk));
    pipeline(tar.stdout, tee, bound, (e) => resolve(e ?? undefined));
  });
  tar.kill('SIGKILL');
  return {
    out: Buffer.concat(chunks),
    whole: error ? undefined : Buffer.concat(copy),
    error,
    seconds: (performance.now() - started) / 1000,
  };
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe('boundTar', () => {
  it.each(['gnu', 'posix'] as const)(
    "passes an honest %s stream unchanged, long names and a file of exactly the cap's room included",
    async (format) => {
      const long = `${'d'.repeat(120)}/${'f'.repeat(150)}.txt`;
      const dir = folder({ 'a.txt': 'one\n', [long]: 'long\n', 'zeros.bin': 3 * MiB, 'é.txt': 'x' });
      const all = await through(dir, format, 64 * MiB);
      expect(all.error).toBeUndefined();
      expect(all.out.equals(all.whole as Buffer)).toBe(true);
      // The cap is the stream's length: that much passes, a byte less does not.
      expect((await through(dir, format, all.out.length)).error).toBeUndefined();
      const short = await through(dir, format, all.out.length - 1);
      expect(short.error).toBeInstanceOf(TarBoundError);
    },
  );

  it.each(['gnu', 'posix'] as const)(
    'refuses a 100 GiB sparse file (%s: base-256 size / pax size record) at its header, none of its bytes passed',
    async (format) => {
      const dir = folder({ 'a.txt': 'one\n', 'big.bin': 100 * GiB });
      const result = await through(dir, format, 16 * MiB);
      expect(result.error).toBeInstanceOf(TarBoundError);
      expect(result.error?.message).toMatch(
        /"work\/big\.bin" \(107374182400 bytes\) takes the copy past its cap of 16777216 bytes/,
      );
      // Headers only (a.txt's, and the pax header's in posix): no byte of the big file's zeros.
      expect(result.out.length).toBeLessThan(8 * 1024);
      expect(result.seconds).toBeLessThan(30);
    },
  );

  it('refuses many sparse files whose sum passes the cap, at the first that takes it past', async () => {
    const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}.bin`, 10 * MiB]));
    const result = await through(folder(files), 'gnu', 64 * MiB);
    expect(result.error).toBeInstanceOf(TarBoundError);
    expect(result.out.length).toBeLessThanOrEqual(64 * MiB);
    expect(result.out.length).toBeGreaterThan(50 * MiB);
  });

  it('ends a stream whose header does not check out, and one that passes the cap by its bytes', async () => {
    const junk = Buffer.alloc(4096, 0x41);
    const bad = await new Promise<Error | undefined>((resolve) =>
      pipeline(Readable.from([junk]), boundTar(MiB), new PassThrough().resume(), (e) =>
        resolve(e ?? undefined),
      ),
    );
    expect(bad).toBeInstanceOf(TarBoundError);
    expect(bad?.message).toMatch(/checksum/);
    // Zero blocks (an archive's end and its padding) are no entries: only the byte count binds them.
    const zeros = await new Promise<Error | undefined>((resolve) =>
      pipeline(
        Readable.from([Buffer.alloc(MiB), Buffer.alloc(MiB)]),
        boundTar(MiB + 512),
        new PassThrough().resume(),
        (e) => resolve(e ?? undefined),
      ),
    );
    expect(zeros).toBeInstanceOf(TarBoundError);
    expect(zeros?.message).toMatch(/the stream \(2097152 bytes so far\)/);
  });
});
