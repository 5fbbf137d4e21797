/**
 * Transparent gzip decompression for report inputs. A report or console log
 * compressed with gzip (`run.log.gz`, or any name: detection is by the magic
 * bytes `1f 8b`, RFC 1952 §2.3.1, not by the extension) is decompressed as it
 * is read, chunk by chunk, so memory stays bounded whatever its size.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { InputError } from '../errors.ts';

/** What `maybeGunzip` found out about its input (filled in as the stream is read). */
export interface GzipState {
  /** True once the input was seen to start with the gzip magic bytes. */
  compressed: boolean;
  /** True when the compressed stream ended before its end (a file cut short). */
  truncated: boolean;
}

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;

/**
 * Passes `source` through unchanged unless its first two bytes are the gzip
 * magic bytes, in which case the decompressed bytes are yielded instead
 * (concatenated gzip members are read as one stream, as `gunzip` does). Text
 * chunks (already decoded) are never taken for gzip.
 *
 * A compressed stream that ends early (`unexpected end of file`) ends the
 * output there and sets `state.truncated`: what was decompressed is still
 * parsed, as for a plain log cut short.
 * @throws InputError naming `sourceName` when the compressed data is corrupt.
 */
export async function* maybeGunzip(
  source: AsyncIterable<string | Uint8Array>,
  sourceName: string,
  state: GzipState = { compressed: false, truncated: false },
): AsyncGenerator<string | Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  // The magic bytes can in principle straddle two chunks: gather at least two bytes.
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let done = false;
  let first: IteratorResult<string | Uint8Array> | undefined;
  for (;;) {
    first = await iterator.next();
    if (first.done) {
      done = true;
      break;
    }
    if (typeof first.value === 'string') break;
    head.push(first.value);
    headBytes += first.value.length;
    if (headBytes >= 2) break;
  }
  const bytes = head.length === 1 ? head[0] : Buffer.concat(head);
  const isGzip =
    bytes !== undefined && bytes.length >= 2 && bytes[0] === GZIP_MAGIC_0 && bytes[1] === GZIP_MAGIC_1;

  async function* rest(): AsyncGenerator<string | Uint8Array> {
    if (bytes !== undefined && bytes.length > 0) yield bytes;
    if (first !== undefined && !first.done && typeof first.value === 'string') yield first.value;
    if (done) return;
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      // A consumer that stops early closes the source (a file handle) at once.
      await iterator.return?.();
    }
  }

  if (!isGzip) {
    yield* rest();
    return;
  }
  state.compressed = true;
  const gunzip = createGunzip();
  const input = Readable.from(rest(), { objectMode: false });
  // Errors of the source (a read error) reach the consumer through the gunzip stream.
  input.on('error', (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR') {
      // zlib: "unexpected end of file": the compressed file was cut short.
      state.truncated = true;
      return;
    }
    if (typeof code === 'string' && code.startsWith('Z_')) {
      throw new InputError(
        { file: sourceName },
        `starts with the gzip magic bytes but is not valid gzip data (${(error as Error).message})`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    input.destroy();
    gunzip.destroy();
  }
}

/** The most `readReportText` reads: 256 MiB (bytes), half of what a JavaScript string can hold. */
export const MAX_REPORT_TEXT_BYTES = 256 * 1024 * 1024;

/**
 * The whole text of a report file (UTF-8), decompressed when it is gzip: for readers that need
 * the log's lines as they stand, not a parse (`berth grade --rules swebench`).
 * @param maxBytes the most it reads (decompressed bytes), default `MAX_REPORT_TEXT_BYTES`.
 * @throws InputError naming `file` when its compressed data is corrupt or it holds more.
 */
export async function readReportText(file: string, maxBytes = MAX_REPORT_TEXT_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of maybeGunzip(createReadStream(file), file)) {
    size += chunk.length;
    if (size > maxBytes)
      throw new InputError(
        { file },
        `holds more than ${maxBytes / (1024 * 1024)} MiB of text, too much to read whole (the SWE-bench harness's reading needs the whole log)`,
      );
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts).toString('utf8');
}
