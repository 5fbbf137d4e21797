/**
 * A streaming JSON scanner for test-runner JSON reports (jest/vitest `--json`,
 * mocha `--reporter json`, RSpec `--format json`). It walks the document
 * character by character, never building the whole tree: values whose path a
 * caller selects are cut out and `JSON.parse`d one at a time, so memory is
 * bounded by the largest selected value (one test), not by the report.
 *
 * Paths are arrays of keys; array elements appear as `'*'`. For jest,
 * `['testResults', '*', 'assertionResults', '*']` selects each test.
 * Text before the first `{` or `[` (a log prefix, a runner banner) and after
 * the document ends is skipped and counted.
 */

export interface JsonRecord {
  path: readonly string[];
  value: unknown;
}

interface Frame {
  kind: 'object' | 'array';
  /** Object: the key of the value being read; array: '*'. */
  key: string;
  /** Object: true while the next string is a key. */
  expectKey: boolean;
}

export interface JsonScanStats {
  /** Characters outside the JSON document (before or after it). */
  outside: number;
  /** True when the input ended inside the document. */
  truncated: boolean;
  /** A syntax problem met while scanning (the scan stops there). */
  error?: string;
}

/**
 * Yields every value whose path `select` accepts, in document order. A
 * selected value's own children are not offered again. Scalars can be
 * selected too (e.g. `['testResults', '*', 'name']`).
 */
export async function* scanJson(
  chunks: AsyncIterable<string | Uint8Array>,
  select: (path: readonly string[]) => boolean,
  stats: JsonScanStats = { outside: 0, truncated: false },
): AsyncGenerator<JsonRecord> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const stack: Frame[] = [];
  let started = false;
  let finished = false;
  let inString = false;
  let escaped = false;
  // Capture of a selected value: text collected so far and the depth it started at.
  let capture: string | undefined;
  let captureDepth = -1;
  let capturePath: string[] = [];
  let captureScalar = false;
  // A key being read (may span chunks).
  let keyText: string | undefined;
  // Inside a number or literal (true, false, null) that is not being captured.
  let inLiteral = false;
  const path = (): string[] => stack.map((f) => f.key);

  const finishCapture = (text: string): JsonRecord | undefined => {
    try {
      return { path: capturePath, value: JSON.parse(text) };
    } catch (error) {
      stats.error = `invalid JSON value at ${capturePath.join('.')}: ${(error as Error).message}`;
      return undefined;
    }
  };

  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let captureFrom = capture !== undefined ? 0 : -1;
    let keyFrom = keyText !== undefined ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (finished) {
        stats.outside += text.length - i;
        break;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92 /* \ */) escaped = true;
        else if (c === 34 /* " */) {
          inString = false;
          if (keyFrom !== -1) {
            keyText = (keyText ?? '') + text.slice(keyFrom, i + 1);
            const frame = stack[stack.length - 1] as Frame;
            try {
              frame.key = JSON.parse(keyText) as string;
            } catch {
              frame.key = keyText.slice(1, -1);
            }
            keyText = undefined;
            keyFrom = -1;
          } else if (captureScalar && capture !== undefined) {
            const record = finishCapture(capture + text.slice(captureFrom, i + 1));
            capture = undefined;
            captureFrom = -1;
            captureScalar = false;
            if (record) yield record;
          }
        }
        continue;
      }
      // Outside strings.
      if (c === 32 || c === 10 || c === 13 || c === 9 || c === 44 || c === 125 || c === 93) inLiteral = false;
      if (c === 32 || c === 10 || c === 13 || c === 9) {
        if (captureScalar && capture !== undefined) {
          const record = finishCapture(capture + text.slice(captureFrom, i));
          capture = undefined;
          captureFrom = -1;
          captureScalar = false;
          if (record) yield record;
        }
        continue;
      }
      if (!started) {
        if (c !== 123 && c !== 91) {
          stats.outside++;
          continue;
        }
        started = true;
      }
      const top = stack[stack.length - 1];
      if (c === 34 /* " */) {
        inString = true;
        if (top?.kind === 'object' && top.expectKey) {
          top.expectKey = false;
          keyText = '';
          keyFrom = i;
          continue;
        }
        if (capture === undefined && select(path())) {
          capture = '';
          captureFrom = i;
          capturePath = path();
          captureScalar = true;
        }
        continue;
      }
      if (c === 58 /* : */) continue;
      if (c === 44 /* , */) {
        if (captureScalar && capture !== undefined) {
          const record = finishCapture(capture + text.slice(captureFrom, i));
          capture = undefined;
          captureFrom = -1;
          captureScalar = false;
          if (record) yield record;
        }
        if (top?.kind === 'object') top.expectKey = true;
        continue;
      }
      if (c === 123 /* { */ || c === 91 /* [ */) {
        if (capture === undefined && stack.length > 0 && select(path())) {
          capture = '';
          captureFrom = i;
          capturePath = path();
          captureDepth = stack.length;
        }
        stack.push(
          c === 123
            ? { kind: 'object', key: '', expectKey: true }
            : { kind: 'array', key: '*', expectKey: false },
        );
        continue;
      }
      if (c === 125 /* } */ || c === 93 /* ] */) {
        if (captureScalar && capture !== undefined) {
          const record = finishCapture(capture + text.slice(captureFrom, i));
          capture = undefined;
          captureFrom = -1;
          captureScalar = false;
          if (record) yield record;
        }
        stack.pop();
        if (capture !== undefined && stack.length === captureDepth) {
          const record = finishCapture(capture + text.slice(captureFrom, i + 1));
          capture = undefined;
          captureFrom = -1;
          captureDepth = -1;
          if (record) yield record;
        }
        if (stack.length === 0) finished = true;
        continue;
      }
      // A number, true, false or null.
      if (inLiteral) continue;
      inLiteral = true;
      if (
        capture === undefined &&
        top !== undefined &&
        !(top.kind === 'object' && top.expectKey) &&
        select(path())
      ) {
        capture = '';
        captureFrom = i;
        capturePath = path();
        captureScalar = true;
      }
    }
    if (capture !== undefined && captureFrom !== -1) capture += text.slice(captureFrom);
    if (keyText !== undefined && keyFrom !== -1) keyText += text.slice(keyFrom);
  }
  if (captureScalar && capture !== undefined) {
    const record = finishCapture(capture);
    if (record) yield record;
  }
  if (started && !finished) stats.truncated = true;
}
