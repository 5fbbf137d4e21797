/**
 * A small in-memory tar writer (ustar with PAX headers for long names and
 * link targets) for uploads into containers: no process to spawn per upload.
 * Modes get `a+rX` (readable by every user; folders and executables
 * searchable), as `tar --mode=a+rX` would do.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(
  name: string,
  options: { mode: number; size: number; type: string; linkname?: string; mtime: number },
): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write(octal(options.mode & 0o7777, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(options.size, 12), 124);
  h.write(octal(Math.floor(options.mtime), 12), 136);
  h.write('        ', 148);
  h.write(options.type, 156);
  if (options.linkname) h.write(options.linkname.slice(0, 100), 157, 'utf8');
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

function pad(size: number): Buffer {
  const rest = size % 512;
  return Buffer.alloc(rest === 0 ? 0 : 512 - rest);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function entry(
  parts: Buffer[],
  name: string,
  options: { mode: number; size: number; type: string; linkname?: string; mtime: number },
  data?: Buffer,
): void {
  const records = [];
  if (Buffer.byteLength(name) > 100) records.push(paxRecord('path', name));
  if (options.linkname && Buffer.byteLength(options.linkname) > 100)
    records.push(paxRecord('linkpath', options.linkname));
  if (records.length) {
    const pax = Buffer.from(records.join(''), 'utf8');
    parts.push(
      header('PaxHeader', { mode: 0o644, size: pax.length, type: 'x', mtime: options.mtime }),
      pax,
      pad(pax.length),
    );
  }
  parts.push(header(name, options));
  if (data) parts.push(data, pad(data.length));
}

const readable = (mode: number, searchable: boolean): number =>
  (mode & 0o7777) | 0o444 | (searchable ? 0o111 : 0);

/**
 * Tars `hostPath` (a folder's contents, or one file) under the name `name`
 * (`tests` gives `tests/`, `tests/test.sh`...). Returns the archive.
 * @param options.mtime every entry's modification time (seconds since the epoch) instead of
 *   the file's: equal content then gives equal bytes (the queue's content-addressed blobs).
 */
export async function tarPath(
  hostPath: string,
  name: string,
  options: { mtime?: number } = {},
): Promise<Buffer> {
  const parts: Buffer[] = [];
  const add = async (path: string, archiveName: string): Promise<void> => {
    const s = await lstat(path);
    const mtime = options.mtime ?? s.mtimeMs / 1000;
    if (s.isSymbolicLink()) {
      entry(parts, archiveName, { mode: 0o777, size: 0, type: '2', linkname: await readlink(path), mtime });
    } else if (s.isDirectory()) {
      entry(parts, `${archiveName}/`, { mode: readable(s.mode, true), size: 0, type: '5', mtime });
      for (const child of (await readdir(path)).sort())
        await add(join(path, child), `${archiveName}/${child}`);
    } else if (s.isFile()) {
      const data = await readFile(path);
      entry(
        parts,
        archiveName,
        { mode: readable(s.mode, (s.mode & 0o111) !== 0), size: data.length, type: '0', mtime },
        data,
      );
    }
  };
  await add(hostPath, name);
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
