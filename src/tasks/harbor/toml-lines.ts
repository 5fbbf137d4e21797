/**
 * Where each key of a TOML document is set, for error messages: smol-toml
 * gives values, not positions. The scanner walks a document that already
 * parsed and records the 1-based line of every table header, key and array
 * element, under the same path zod reports (`['steps', 1, 'name']` for the
 * second `[[steps]]` table's `name`). A path it cannot place gets no line:
 * better none than a wrong one.
 */

type Path = Array<string | number>;

interface Place {
  line: number;
  /** Line where the value ends (a multi-line string or array ends below its key). */
  endLine: number;
  kind: 'table' | 'value';
}

/** Thrown inside the scanner on anything unexpected: the index built so far is kept. */
class Stop extends Error {}

const BARE_KEY = /[A-Za-z0-9_-]/;

/**
 * Indexes `text` (a TOML document that parses) and returns a lookup from a
 * key path to the 1-based line where it is set, or `undefined`.
 *
 * A path is found when it was set by a header, a `key = value` line (dotted
 * keys included), an inline-table key or an array element; a path deeper than
 * what was found (inside a one-line value) gets that value's line. A key that
 * is absent, or sits in a value spread over several lines that the scanner
 * cannot split, gets `undefined`.
 */
export function tomlKeyLines(text: string): (path: readonly (string | number)[]) => number | undefined {
  const places = new Map<string, Place>();
  try {
    scan(text, places);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  return (path) => {
    const exact = places.get(JSON.stringify(path));
    if (exact) return exact.line;
    for (let n = path.length - 1; n > 0; n--) {
      const place = places.get(JSON.stringify(path.slice(0, n)));
      if (place === undefined) continue;
      // Inside a one-line value (inline table, inline array): that line. Anything else is unknown.
      return place.kind === 'value' && place.line === place.endLine ? place.line : undefined;
    }
    return undefined;
  };
}

function scan(text: string, places: Map<string, Place>): void {
  let i = 0;
  let line = 1;
  /** Index of the last element of each array of tables, by its path. */
  const arrayTables = new Map<string, number>();
  let table: Path = [];

  const peek = (offset = 0) => text[i + offset] ?? '';
  const advance = () => {
    if (text[i] === '\n') line++;
    i++;
  };
  const record = (path: Path, place: Place) => {
    const key = JSON.stringify(path);
    if (!places.has(key)) places.set(key, place);
  };
  const skipSpaces = () => {
    while (peek() === ' ' || peek() === '\t') i++;
  };
  /** Whitespace, newlines and comments (inside arrays, between statements). */
  const skipBlank = () => {
    for (;;) {
      const c = peek();
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') advance();
      else if (c === '#') while (i < text.length && peek() !== '\n') i++;
      else return;
    }
  };

  const quoted = (quote: string): string => {
    const start = i;
    i++;
    while (i < text.length && peek() !== quote && peek() !== '\n') {
      if (quote === '"' && peek() === '\\') i++;
      i++;
    }
    if (peek() !== quote) throw new Stop();
    i++;
    const raw = text.slice(start, i);
    if (quote === "'") return raw.slice(1, -1);
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  };

  const keyPart = (): string => {
    skipSpaces();
    const c = peek();
    if (c === '"' || c === "'") return quoted(c);
    const start = i;
    while (BARE_KEY.test(peek())) i++;
    if (i === start) throw new Stop();
    return text.slice(start, i);
  };

  const dottedKey = (): string[] => {
    const parts = [keyPart()];
    for (;;) {
      skipSpaces();
      if (peek() !== '.') return parts;
      i++;
      parts.push(keyPart());
    }
  };

  const value = (path: Path): void => {
    const startLine = line;
    const c = peek();
    if ((c === '"' || c === "'") && peek(1) === c && peek(2) === c) {
      // Multi-line string: up to the closing triple quote (up to two more quotes belong to the string).
      i += 3;
      for (;;) {
        if (i >= text.length) throw new Stop();
        if (c === '"' && peek() === '\\') {
          i++;
          advance();
          continue;
        }
        if (peek() === c && peek(1) === c && peek(2) === c) {
          i += 3;
          while (peek() === c) i++;
          break;
        }
        advance();
      }
    } else if (c === '"' || c === "'") {
      quoted(c);
    } else if (c === '[') {
      i++;
      for (let index = 0; ; index++) {
        skipBlank();
        if (peek() === ']') {
          i++;
          break;
        }
        value([...path, index]);
        skipBlank();
        if (peek() === ',') i++;
        else if (peek() === ']') {
          i++;
          break;
        } else throw new Stop();
      }
    } else if (c === '{') {
      i++;
      // TOML 1.0 keeps an inline table on one line; newlines are tolerated here all the same.
      for (;;) {
        skipBlank();
        if (peek() === '}') {
          i++;
          break;
        }
        const key = dottedKey();
        skipSpaces();
        if (peek() !== '=') throw new Stop();
        i++;
        skipSpaces();
        value([...path, ...key]);
        skipBlank();
        if (peek() === ',') i++;
        else if (peek() === '}') {
          i++;
          break;
        } else throw new Stop();
      }
    } else {
      // Number, boolean, date-time (which may hold one space): up to a delimiter.
      const start = i;
      while (i < text.length && !',]}\n#'.includes(peek())) i++;
      if (text.slice(start, i).trim() === '') throw new Stop();
    }
    record(path, { line: startLine, endLine: line, kind: 'value' });
  };

  const header = (): void => {
    const headerLine = line;
    const isArray = peek(1) === '[';
    i += isArray ? 2 : 1;
    const keys = dottedKey();
    skipSpaces();
    if (peek() !== ']' || (isArray && peek(1) !== ']')) throw new Stop();
    i += isArray ? 2 : 1;
    const path: Path = [];
    keys.forEach((key, k) => {
      path.push(key);
      const id = JSON.stringify(path);
      if (isArray && k === keys.length - 1) {
        const index = (arrayTables.get(id) ?? -1) + 1;
        arrayTables.set(id, index);
        path.push(index);
      } else {
        const index = arrayTables.get(id);
        if (index !== undefined) path.push(index);
      }
    });
    table = path;
    record(path, { line: headerLine, endLine: headerLine, kind: 'table' });
  };

  for (;;) {
    skipBlank();
    if (i >= text.length) return;
    const before = i;
    if (peek() === '[') header();
    else {
      const key = dottedKey();
      skipSpaces();
      if (peek() !== '=') throw new Stop();
      i++;
      skipSpaces();
      value([...table, ...key]);
    }
    // Rest of the line: spaces and a comment.
    skipSpaces();
    if (peek() === '#') while (i < text.length && peek() !== '\n') i++;
    if (i === before) throw new Stop();
  }
}
