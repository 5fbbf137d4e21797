/**
 * Chooses the parser for a log: by registry name (or alias) when the task names
 * one, else by detection on the first 64 KiB. Uses the parser registry
 * (src/parsers/registry.ts) unless a list is given (tests, other graders).
 */
import * as registry from '../parsers/registry.ts';
import type { Parser } from '../parsers/types.ts';

/** The parser registered under `name` or one of its aliases, or undefined. */
export function findParser(name: string, list?: readonly Parser[]): Parser | undefined {
  if (!list) {
    try {
      return registry.getParser(name);
    } catch {
      return undefined;
    }
  }
  const wanted = name.toLowerCase().replace(/_/g, '-');
  const norm = (s: string) => s.toLowerCase().replace(/_/g, '-');
  return list.find((p) => norm(p.name) === wanted || (p.aliases ?? []).some((a) => norm(a) === wanted));
}

/** The parser whose `detect` scores the head highest (registry: at least its minimum score), if any. */
export function detectParser(text: string, list?: readonly Parser[]): Parser | undefined {
  const head = text.slice(0, registry.DETECT_HEAD_BYTES);
  if (!list) return registry.detectParser(head);
  let best: Parser | undefined;
  let bestScore = 0;
  for (const parser of list) {
    const score = parser.detect(head);
    if (score > bestScore) {
      best = parser;
      bestScore = score;
    }
  }
  return best;
}

/** Names of every known parser, for messages. */
export function parserNames(list?: readonly Parser[]): string[] {
  return (list ?? registry.listParsers()).map((p) => p.name);
}
