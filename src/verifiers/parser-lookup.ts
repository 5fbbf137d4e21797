/**
 * Chooses the parser for a log: by registry name (or alias) when the task names
 * one, else by detection on the first 64 KiB. Works on the list in
 * src/parsers/index.ts unless a list is given (tests, other graders).
 */
import { parsers as registered } from '../parsers/index.ts';
import type { Parser } from '../parsers/types.ts';

/** The parser registered under `name` or one of its aliases (case-insensitive). */
export function findParser(name: string, list: readonly Parser[] = registered): Parser | undefined {
  const wanted = name.toLowerCase();
  return list.find(
    (p) => p.name.toLowerCase() === wanted || (p.aliases ?? []).some((a) => a.toLowerCase() === wanted),
  );
}

/** The parser whose `detect` scores the head highest (above 0), if any. */
export function detectParser(head: string, list: readonly Parser[] = registered): Parser | undefined {
  let best: Parser | undefined;
  let bestScore = 0;
  for (const parser of list) {
    const score = parser.detect(head.slice(0, 64 * 1024));
    if (score > bestScore) {
      best = parser;
      bestScore = score;
    }
  }
  return best;
}

/** Names of every known parser, for messages. */
export function parserNames(list: readonly Parser[] = registered): string[] {
  return list.map((p) => p.name);
}
