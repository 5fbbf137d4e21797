/**
 * The gateway's one redaction rule: no key it holds leaves it, in any spelling a
 * consumer would decode back to the key. Every byte the gateway hands an agent
 * (answers of any status, streamed or not, errors) and everything it records
 * (model-calls.jsonl, events, the response cache) goes through a `KeyRedactor`.
 *
 * Spellings matched, per character of the key (case-insensitive): the character
 * itself; JSON/JavaScript escapes `\uXXXX` (a surrogate pair above U+FFFF) and
 * `\xXX`, with up to 8 backslashes (an escape inside a string inside JSON); `\/`;
 * URL-encoding `%XX` of its UTF-8 bytes (also double-encoded `%25XX`); HTML
 * character references `&#NN;` / `&#xHH;`. Mixed spellings match (`sk\u002dA%42`).
 * Also base64 and base64url of the key, of `Bearer <key>` and of `x-api-key: <key>`,
 * at each of the three byte alignments a longer base64 text can put them in (the
 * part of the encoding that depends on the key's bytes alone). Each match becomes `***`.
 *
 * Not matched: a key split across two separately decoded strings (two streamed
 * text deltas), reversed, or otherwise transformed.
 */

/** What a matched key is replaced with. */
export const REDACTED = '***';

/** Keys shorter than this are not redacted (they would match ordinary text). */
const MIN_KEY_LENGTH = 4;

const MAX_BACKSLASHES = 8;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `value` in hex, `width` digits (the pattern is case-insensitive). */
function hexPattern(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

/** The alternatives that spell one character (a code point). */
function characterPattern(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const slashes = `\\\\{1,${MAX_BACKSLASHES}}`;
  const alternatives = [escapeRegex(char)];
  if (code <= 0xffff) alternatives.push(`${slashes}u${hexPattern(code, 4)}`);
  else {
    const high = Math.floor((code - 0x10000) / 0x400) + 0xd800;
    const low = ((code - 0x10000) % 0x400) + 0xdc00;
    alternatives.push(`${slashes}u${hexPattern(high, 4)}${slashes}u${hexPattern(low, 4)}`);
  }
  if (code <= 0xff) alternatives.push(`${slashes}x${hexPattern(code, 2)}`);
  if (char === '/') alternatives.push(`${slashes}/`);
  const bytes = Buffer.from(char, 'utf8');
  alternatives.push([...bytes].map((b) => `%(?:25){0,2}${hexPattern(b, 2)}`).join(''));
  alternatives.push(`&#0{0,6}${code};`, `&#x0{0,6}${code.toString(16)};`);
  return `(?:${alternatives.join('|')})`;
}

/** The longest text one spelling of `char` can take (bounds the stream hold-back). */
function characterMaxLength(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  const escaped = code <= 0xffff ? MAX_BACKSLASHES + 5 : 2 * (MAX_BACKSLASHES + 5);
  const url = Buffer.byteLength(char, 'utf8') * 7;
  const html = 10 + String(code).length;
  return Math.max(escaped, url, html, char.length);
}

/**
 * The base64 texts that carry `payload` wherever it sits in a longer base64 text:
 * for each alignment, the characters determined by the payload's bytes alone.
 */
function base64Cores(payload: string): string[] {
  const cores = new Set<string>();
  const bytes = Buffer.from(payload, 'utf8');
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const full = padded.toString('base64').replace(/=+$/, '');
    // Characters that hold a prefix byte, and the last one (it may hold following bytes).
    const start = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const end = Math.floor((padded.length * 8) / 6);
    const core = full.slice(start, end);
    if (core.length >= 8) {
      cores.add(core);
      cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...cores];
}

/** Redacts a set of keys from text, objects and streams. */
export class KeyRedactor {
  private readonly pattern: RegExp | undefined;
  /** The longest text one spelling of a key can take, in UTF-16 units. */
  readonly maxSpelling: number;

  constructor(keys: Iterable<string | undefined>) {
    const distinct = [...new Set([...keys].filter((k): k is string => !!k && k.length >= MIN_KEY_LENGTH))];
    const alternatives: string[] = [];
    let longest = 0;
    for (const key of distinct) {
      const chars = [...key];
      alternatives.push(chars.map(characterPattern).join(''));
      longest = Math.max(
        longest,
        chars.reduce((n, c) => n + characterMaxLength(c), 0),
      );
      for (const payload of [key, `Bearer ${key}`, `x-api-key: ${key}`])
        for (const core of base64Cores(payload)) {
          alternatives.push(escapeRegex(core));
          longest = Math.max(longest, core.length);
        }
    }
    // Longest alternatives first, so a base64 core of `Bearer <key>` wins over the key's own.
    alternatives.sort((a, b) => b.length - a.length);
    this.pattern = alternatives.length ? new RegExp(alternatives.join('|'), 'gi') : undefined;
    this.maxSpelling = longest;
  }

  /** True when there is no key to redact. */
  get empty(): boolean {
    return this.pattern === undefined;
  }

  /** `text` with every spelling of every key replaced by `***`. */
  text(text: string): string {
    return this.pattern ? text.replace(this.pattern, REDACTED) : text;
  }

  /** A copy of `value` (JSON-like data) with every string redacted, keys of objects included. */
  value<T>(value: T): T {
    if (!this.pattern) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.text(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) out[this.text(k)] = walk(x);
        return out;
      }
      return v;
    };
    return walk(value) as T;
  }

  /**
   * A redactor for one stream of text (server-sent events): `push` returns what may go out
   * now, every complete event (up to the last blank line) redacted, holding back the
   * unfinished event; an event longer than a key's longest spelling goes out but for that
   * tail. `end` returns the rest. A key split across chunks is matched whole; a spelling
   * never spans a blank line, so cutting there splits none.
   */
  stream(): { push(chunk: string): string; end(): string } {
    let pending = '';
    const pattern = this.pattern;
    const hold = this.maxSpelling;
    return {
      push: (chunk: string): string => {
        if (!pattern) return chunk;
        pending += chunk;
        const boundary = Math.max(
          ...['\r\n\r\n', '\n\n', '\r\r'].map((b) => {
            const at = pending.lastIndexOf(b);
            return at < 0 ? 0 : at + b.length;
          }),
        );
        let cut = Math.max(boundary, pending.length - hold);
        if (cut <= 0) return '';
        let out = '';
        let from = 0;
        pattern.lastIndex = 0;
        for (let m = pattern.exec(pending); m; m = pattern.exec(pending)) {
          if (m.index >= cut) break;
          out += pending.slice(from, m.index) + REDACTED;
          from = m.index + m[0].length;
          if (from > cut) cut = from;
          if (m[0].length === 0) pattern.lastIndex++;
        }
        out += pending.slice(from, cut);
        pending = pending.slice(cut);
        return out;
      },
      end: (): string => {
        const out = this.text(pending);
        pending = '';
        return out;
      },
    };
  }
}
