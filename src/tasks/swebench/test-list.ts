/**
 * FAIL_TO_PASS / PASS_TO_PASS come in three encodings in the wild: a JSON list
 * (SWE-agent's copies of SWE-bench), a JSON-encoded string (the Hugging Face
 * datasets, SWE-bench Verified), and a Python `repr()` of a list (written by
 * some tools with `str(list)`). All three decode to the same string list.
 */

/** Thrown with a short reason; the loader turns it into an InputError naming file, line and field. */
export class TestListError extends Error {}

/**
 * Decodes a test list given as a list, a JSON-encoded string or a Python repr string.
 * @throws TestListError when the value is none of these or holds a non-string element.
 */
export function decodeTestList(value: unknown): string[] {
  if (Array.isArray(value)) return checkStrings(value);
  if (typeof value !== 'string')
    throw new TestListError(`expected a list of test ids or a string encoding one, got ${describe(value)}`);
  const text = value.trim();
  if (text === '') return [];
  try {
    return checkStrings(JSON.parse(text));
  } catch (jsonError) {
    if (jsonError instanceof TestListError) throw jsonError;
  }
  return parsePythonStringList(text);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : typeof value;
}

function checkStrings(value: unknown): string[] {
  if (!Array.isArray(value)) throw new TestListError(`expected a list of test ids, got ${describe(value)}`);
  value.forEach((item, index) => {
    if (typeof item !== 'string')
      throw new TestListError(`element ${index} is ${describe(item)}, not a string`);
  });
  return value as string[];
}

/**
 * Parses a Python list of str literals: `['a', "b's", 'c\\n']`, with an optional
 * trailing comma. Supports the escapes Python's repr() writes (\\ \' \" \n \r \t
 * \xNN \uNNNN \UNNNNNNNN) and adjacent-literal concatenation is not needed.
 * @throws TestListError with the character position of the problem.
 */
export function parsePythonStringList(text: string): string[] {
  let i = 0;
  const fail = (what: string): never => {
    throw new TestListError(`not a JSON list nor a Python list of strings: ${what} at character ${i + 1}`);
  };
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  skipSpace();
  if (text[i] !== '[') fail("expected '['");
  i++;
  const out: string[] = [];
  skipSpace();
  if (text[i] === ']') {
    i++;
    skipSpace();
    if (i !== text.length) fail('unexpected text after the list');
    return out;
  }
  for (;;) {
    skipSpace();
    let prefix = '';
    while (/[rRuU]/.test(text[i] ?? '')) prefix += text[i++];
    const quote = text[i];
    if (quote !== "'" && quote !== '"') fail('expected a quoted string');
    const raw = /r/i.test(prefix);
    i++;
    let value = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i] as string;
      if (c === quote) {
        i++;
        break;
      }
      if (c === '\\' && !raw) {
        const e = text[i + 1] ?? '';
        const simple: Record<string, string> = {
          '\\': '\\',
          "'": "'",
          '"': '"',
          n: '\n',
          r: '\r',
          t: '\t',
          '0': '\0',
          a: '\x07',
          b: '\b',
          f: '\f',
          v: '\v',
        };
        if (e in simple && !(e === '0' && /[0-7]/.test(text[i + 2] ?? ''))) {
          value += simple[e];
          i += 2;
        } else if (e === 'x' || e === 'u' || e === 'U') {
          const width = e === 'x' ? 2 : e === 'u' ? 4 : 8;
          const hex = text.slice(i + 2, i + 2 + width);
          if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) fail(`bad \\${e} escape`);
          value += String.fromCodePoint(Number.parseInt(hex, 16));
          i += 2 + width;
        } else if (/[0-7]/.test(e)) {
          const oct = (text.slice(i + 1, i + 4).match(/^[0-7]{1,3}/) as RegExpMatchArray)[0];
          value += String.fromCodePoint(Number.parseInt(oct, 8));
          i += 1 + oct.length;
        } else {
          value += `\\${e}`;
          i += 2;
        }
        continue;
      }
      value += c;
      i++;
    }
    out.push(value);
    skipSpace();
    if (text[i] === ',') {
      i++;
      skipSpace();
      if (text[i] === ']') {
        i++;
        break;
      }
      continue;
    }
    if (text[i] === ']') {
      i++;
      break;
    }
    fail("expected ',' or ']'");
  }
  skipSpace();
  if (i !== text.length) fail('unexpected text after the list');
  return out;
}
