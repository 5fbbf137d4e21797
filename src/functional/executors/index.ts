/**
 * The registry of language executors, by mxeval language name and aliases.
 * Kotlin and Java come from `src/functional/jvm/` (one import and one entry
 * below, added on the JVM branch).
 */
import { javaExecutor, kotlinExecutor } from '../jvm/executor.ts';
import type { LanguageExecutor } from '../types.ts';
import { processExecutors } from './process.ts';
import { pythonExecutor } from './python.ts';

/** Every executor berth knows. Order does not matter; names and aliases must be unique. */
export const executors: LanguageExecutor[] = [
  pythonExecutor,
  ...processExecutors,
  kotlinExecutor,
  javaExecutor,
];

/** Normalises a language name: lower case, trimmed. */
export function normaliseLanguage(language: string): string {
  return language.trim().toLowerCase();
}

/** The executor for `language` (a name or an alias), or undefined. */
export function findExecutor(language: string): LanguageExecutor | undefined {
  const name = normaliseLanguage(language);
  return executors.find((executor) => executor.language === name || executor.aliases.includes(name));
}

/** Names of every registered language, for messages. */
export function knownLanguages(): string[] {
  return executors.map((executor) => executor.language).sort();
}
