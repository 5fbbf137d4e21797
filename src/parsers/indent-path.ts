/**
 * Tracks nested suite names by indentation, for runners that print a tree
 * (jest --verbose, mocha spec, RSpec documentation, PHPUnit testdox):
 * a line at indent n is a child of the nearest earlier suite line with a
 * smaller indent.
 */
export class IndentPath {
  private readonly stack: Array<{ indent: number; name: string }> = [];

  /** Records a suite line; it replaces every open suite at the same or deeper indent. */
  push(indent: number, name: string): void {
    this.popTo(indent);
    this.stack.push({ indent, name });
  }

  /** The names of the suites enclosing a line at `indent`, outermost first. */
  ancestors(indent: number): string[] {
    this.popTo(indent);
    return this.stack.map((s) => s.name);
  }

  clear(): void {
    this.stack.length = 0;
  }

  private popTo(indent: number): void {
    while (
      this.stack.length > 0 &&
      (this.stack[this.stack.length - 1] as { indent: number }).indent >= indent
    ) {
      this.stack.pop();
    }
  }
}

/** Number of leading spaces (a tab counts as 4). */
export function indentOf(line: string): number {
  let n = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) n++;
    else if (c === 9) n += 4;
    else break;
  }
  return n;
}

/**
 * Decides whether a stream holds a JSON report: its first non-blank character
 * is `{` or `[`, or, when `start` is given, a line in its first 64 KiB matches
 * `start` (a JSON report printed after a banner, e.g. `npm test -- --json`);
 * the text before that line is then dropped. Nothing is consumed: the returned
 * stream replays what was read.
 */
export async function sniffJson(
  chunks: AsyncIterable<string | Uint8Array>,
  start?: RegExp,
): Promise<{ json: boolean; stream: AsyncIterable<string | Uint8Array> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let head = '';
  let done = false;
  let json = false;
  let from = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head += typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
    if (/\S/.test(head) || head.length >= 65536) break;
  }
  const first = /\S/.exec(head);
  if (first && (first[0] === '{' || first[0] === '[')) json = true;
  else if (start) {
    // Read on to 64 KiB to look for the report's first line.
    while (!done && head.length < 65536) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        break;
      }
      head += typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
    }
    const flags = start.flags.includes('m') ? start.flags : `${start.flags}m`;
    const m = new RegExp(start.source, flags).exec(head.slice(0, 65536));
    if (m) {
      json = true;
      from = m.index;
    }
  }
  if (done) head += decoder.decode();
  const rest = from > 0 ? head.slice(from) : head;
  async function* replay(): AsyncGenerator<string | Uint8Array> {
    if (rest) yield rest;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      yield typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  }
  return { json, stream: replay() };
}
