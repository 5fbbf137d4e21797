/**
 * A tar stream bounded in size, for a folder of untrusted files carried from one environment
 * into another (src/trials/agent-work.ts). The producer (Docker's engine, GNU tar) stores every
 * file's contents expanded, holes of a sparse file included: `truncate -s 100G f` costs no disk
 * where it was made and 100 GiB of stream (and of disk where it is extracted). So the bound
 * counts the stream, and reads each entry's header as it passes: an entry whose stored size
 * (the header's, or its pax `size` record) would take the stream past the cap is refused before
 * a byte of its contents goes through. The byte count alone stays the bound if a header reads
 * wrong; a header whose checksum is wrong ends the stream (the walk lost its place).
 */
import { Transform, type TransformCallback } from 'node:stream';

const BLOCK = 512;
/** The most a pax extended header may hold here (it names one entry: a path, times, a size). */
const PAX_MAX = 1024 * 1024;
/** Entry types that describe the entry after them (pax extended and global headers, GNU long names). */
const META = new Set(['x', 'g', 'L', 'K']);

/** A tar stream that passes its cap, or that cannot be walked. */
export class TarBoundError extends Error {
  override name = 'TarBoundError';
}

/** The bytes of a stream of whole 512-byte blocks, padded: a header's `size` as stored. */
const padded = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

/** The header's size field: octal ASCII, or base-256 (GNU) when its first byte has the high bit. */
function sizeField(header: Buffer): number {
  const field = header.subarray(124, 136);
  if ((field[0] as number) & 0x80) {
    // A negative size (0xff) is no size a producer writes.
    if (field[0] !== 0x80) return Number.NaN;
    let n = 0;
    for (const byte of field.subarray(1)) n = n * 256 + byte;
    return n;
  }
  return octal(field);
}

function octal(field: Buffer): number {
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^[ \0]+/, '');
  if (text === '') return 0;
  return /^[0-7]+$/.test(text) ? Number.parseInt(text, 8) : Number.NaN;
}

/** Whether the header's checksum (bytes 148-155 counted as spaces) is the one it stores. */
function checksumOk(header: Buffer): boolean {
  let sum = 8 * 32;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += header[i] as number;
  return sum === octal(header.subarray(148, 156));
}

/** The records of a pax extended header (`<length> <key>=<value>\n` each). */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number.parseInt(data.toString('latin1', at, space), 10);
    if (!(length > 0) || at + length > data.length) break;
    const record = data.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

/** The entry's name as its header gives it (ustar prefix and name), for messages. */
function headerName(header: Buffer): string {
  const field = (from: number, to: number) => {
    const raw = header.subarray(from, to);
    const end = raw.indexOf(0);
    return raw.subarray(0, end < 0 ? raw.length : end).toString('utf8');
  };
  const name = field(0, 100);
  const ustar = header.toString('latin1', 257, 262) === 'ustar';
  const prefix = ustar ? field(345, 500) : '';
  return prefix ? `${prefix}/${name}` : name;
}

/** A name from the stream, quoted and cut for a message (it is the agent's text). */
const shown = (name: string): string => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}...` : name);

/**
 * A pass-through of a tar stream that fails with {@link TarBoundError} before the stream passes
 * `cap` bytes: at the header of the entry whose contents would take it past (nothing of them
 * passed on), or at the byte count itself. Pipe with `stream.pipeline`, so its failure ends the
 * producer too.
 */
export function boundTar(cap: number): Transform {
  let position = 0;
  // The current header block as it fills, or the data left to skip (or collect) after one.
  let header = Buffer.alloc(0);
  let skip = 0;
  // A pax extended header's data as it is collected, and its size (without the padding).
  let pax: Buffer[] | undefined;
  let paxSize = 0;
  // What the last pax header said of the entry after it.
  let next: { size?: number; name?: string } = {};

  const over = (what: string) => new TarBoundError(`${what} takes the copy past its cap of ${cap} bytes`);

  /** Walks `chunk` (whose first byte is at `position`); an error when a header is refused. */
  const walk = (chunk: Buffer): Error | undefined => {
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const take = Math.min(skip, chunk.length - at);
        pax?.push(chunk.subarray(at, at + take));
        skip -= take;
        at += take;
        if (skip === 0 && pax) {
          const records = paxRecords(Buffer.concat(pax).subarray(0, paxSize));
          pax = undefined;
          const size = records.get('size');
          next = {
            ...(size !== undefined ? { size: /^\d+$/.test(size) ? Number(size) : Number.NaN } : {}),
            ...(records.has('path') ? { name: records.get('path') as string } : {}),
          };
        }
        continue;
      }
      const take = Math.min(BLOCK - header.length, chunk.length - at);
      header = Buffer.concat([header, chunk.subarray(at, at + take)]);
      at += take;
      if (header.length < BLOCK) continue;
      const block = header;
      header = Buffer.alloc(0);
      // A zero block ends the archive (two of them, then padding to the record size).
      if (block.every((b) => b === 0)) continue;
      if (!checksumOk(block)) return new TarBoundError('the tar stream has a header with a wrong checksum');
      const type = String.fromCharCode(block[156] as number);
      const stored = sizeField(block);
      // A pax `size` record applies to the entry after the pax header (not to a global one, nor
      // to a GNU long name's entry, whose data is the name).
      const size = META.has(type) ? stored : (next.size ?? stored);
      const name = META.has(type) ? headerName(block) : (next.name ?? headerName(block));
      if (!META.has(type)) next = {};
      if (!Number.isSafeInteger(size) || size < 0)
        return new TarBoundError(`the tar stream has an entry of unreadable size (${shown(name)})`);
      const end = position + at + padded(size);
      if (end > cap) return over(`${shown(name)} (${size} bytes)`);
      skip = padded(size);
      if (type === 'x' && size > 0) {
        if (size > PAX_MAX) return new TarBoundError(`the tar stream has a pax header of ${size} bytes`);
        pax = [];
        paxSize = size;
      }
    }
    return undefined;
  };

  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      if (position + chunk.length > cap) {
        done(over(`the stream (${position + chunk.length} bytes so far)`));
        return;
      }
      const error = walk(chunk);
      if (error) {
        done(error);
        return;
      }
      position += chunk.length;
      done(null, chunk);
    },
  });
}
