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

/** Reads the first non-blank character of a stream without consuming it: `{`/`[` means a JSON report. */
export async function sniffJson(
  chunks: AsyncIterable<string | Uint8Array>,
): Promise<{ json: boolean; stream: AsyncIterable<string | Uint8Array> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const seen: Array<string | Uint8Array> = [];
  let json = false;
  let decided = false;
  const decoder = new TextDecoder('utf-8', { fatal: false });
  while (!decided) {
    const next = await iterator.next();
    if (next.done) break;
    seen.push(next.value);
    const text = typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
    const m = /\S/.exec(text);
    if (m) {
      json = m[0] === '{' || m[0] === '[';
      decided = true;
    }
  }
  async function* replay(): AsyncGenerator<string | Uint8Array> {
    yield* seen;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { json, stream: replay() };
}
