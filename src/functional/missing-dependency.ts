/**
 * A dependency the problem itself needs is not installed: its prompt or its tests import a
 * module the toolchain cannot find. No completion could pass, so this is an error of the run
 * (`error_of_run`, the run is refused), never a verdict: mxeval scores every MBJSP sample failed
 * when lodash is missing. A module that only the completion imports stays the sample's failure.
 *
 * One rule per language: the toolchain's message names the module (`Cannot find module 'x'`,
 * `No module named 'x'`, `cannot find package "x"`, ...), and the problem's text imports that
 * module wherever the import stands (a prompt or a test, the first line or the middle of one,
 * inside a function, after `;`, in `import a, b`).
 */
import type { ExecutionItem, ExecutionResult } from './types.ts';

/** The problem text that may import things: the prompt and the tests (never the completion). */
export interface ProblemText {
  prompt: string;
  test: string;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Rule {
  /** Module names the toolchain's output says it cannot find. */
  find(output: string): string[];
  /** Whether the problem's text imports `name`. */
  imports(text: string, name: string): boolean;
}

const allMatches = (re: RegExp, output: string) => [...output.matchAll(re)].map((m) => m[1] as string);

/** JavaScript / TypeScript: `require('x')`, `import ... from 'x'`, `import 'x'`, `import('x')`. */
const JS: Rule = {
  find: (o) => allMatches(/Cannot find module '([^']+)'/g, o),
  imports: (t, n) =>
    new RegExp(`(?:require\\s*\\(\\s*|from\\s+|import\\s*\\(?\\s*)['"\`]${escapeRegExp(n)}['"\`]`).test(t),
};

const RULES: Record<string, Rule> = {
  javascript: JS,
  typescript: JS,
  python: {
    // `No module named 'x.y'`: the top-level package is what the problem imports.
    find: (o) => allMatches(/No module named '([\w.]+)'/g, o).map((n) => n.split('.')[0] as string),
    imports: (t, n) =>
      new RegExp(
        `(?:^|[;:\\s])(?:from\\s+${escapeRegExp(n)}(?:\\.[\\w.]+)?\\s+import\\b|import\\s+(?:[\\w.]+(?:\\s+as\\s+\\w+)?\\s*,\\s*)*${escapeRegExp(n)}(?:[.\\s,;]|$))`,
        'm',
      ).test(t) || new RegExp(`__import__\\(\\s*['"]${escapeRegExp(n)}['"]`).test(t),
  },
  go: {
    find: (o) => [
      ...allMatches(/cannot find package "([^"]+)"/g, o),
      ...allMatches(/no required module provides package (\S+?)[:;\s]/g, o),
      ...allMatches(/package (\S+) is not in (?:GOROOT|std)/g, o),
    ],
    imports: (t, n) => new RegExp(`"${escapeRegExp(n)}"`).test(t),
  },
  ruby: {
    find: (o) => allMatches(/cannot load such file -- (\S+)/g, o),
    imports: (t, n) => new RegExp(`require(?:_relative)?\\s*\\(?\\s*['"]${escapeRegExp(n)}['"]`).test(t),
  },
  php: {
    find: (o) => allMatches(/Failed opening required '([^']+)'/g, o),
    imports: (t, n) =>
      new RegExp(`(?:require|include)(?:_once)?\\s*\\(?\\s*['"]${escapeRegExp(n)}['"]`).test(t),
  },
  perl: {
    find: (o) => allMatches(/Can't locate (\S+)\.pm in @INC/g, o).map((n) => n.replaceAll('/', '::')),
    imports: (t, n) => new RegExp(`\\b(?:use|require)\\s+${escapeRegExp(n)}\\b`).test(t),
  },
  cpp: {
    find: (o) => allMatches(/fatal error: ([^:\s]+): No such file or directory/g, o),
    imports: (t, n) => new RegExp(`#\\s*include\\s*[<"]${escapeRegExp(n)}[>"]`).test(t),
  },
  swift: {
    find: (o) => allMatches(/no such module '([^']+)'/g, o),
    imports: (t, n) => new RegExp(`\\bimport\\s+${escapeRegExp(n)}\\b`).test(t),
  },
  scala: {
    find: (o) => [
      ...allMatches(/object (\w+) is not a member of package ([\w.]+)/g, o),
      ...allMatches(/not found: object (\w+)/g, o),
    ],
    imports: (t, n) => new RegExp(`\\bimport\\s+[\\w.]*\\b${escapeRegExp(n)}\\b`).test(t),
  },
  java: {
    find: (o) => allMatches(/error: package ([\w.]+) does not exist/g, o),
    imports: (t, n) => new RegExp(`\\bimport\\s+(?:static\\s+)?${escapeRegExp(n)}\\.`).test(t),
  },
  kotlin: {
    // `error: unresolved reference: foo` (K1) or `unresolved reference 'foo'.` (K2), on an import
    // line (kotlinc prints the source line after the message).
    find: (o) =>
      [...o.matchAll(/unresolved reference:? '?(\w+)'?\.?[^\n]*\n([^\n]*)/gi)]
        .filter((m) => /\bimport\s/.test(m[2] as string))
        .map((m) => m[1] as string),
    imports: (t, n) => new RegExp(`^\\s*import\\s+(?:[\\w.]+\\.)?${escapeRegExp(n)}\\b`, 'm').test(t),
  },
};

/**
 * When the toolchain's `output` says a module the problem (prompt or tests) imports cannot be
 * found, the message for the error of the run; undefined otherwise (a completion's own import,
 * or any other failure).
 */
export function missingDependency(
  language: string,
  output: string,
  problem: ProblemText,
): string | undefined {
  const rule = RULES[language];
  if (!rule || output === '') return undefined;
  const text = `${problem.prompt}\n${problem.test}`;
  for (const name of new Set(rule.find(output))) {
    if (rule.imports(text, name)) return `the problem needs ${JSON.stringify(name)}, which is not installed`;
  }
  return undefined;
}

/**
 * The verdicts to confirm: a missing-dependency error of the run drawn from output the sample
 * could have written (its own stderr, or a compiler's message quoting its source), with the
 * verdict the sample gets when the claim is not confirmed.
 */
const claims = new WeakMap<ExecutionResult, ExecutionResult>();

/**
 * `verdict` (the sample's failure as if nothing were missing), or, when `missing` says the
 * problem's dependency is not installed, an error of the run to confirm with
 * `DependencyConfirmation` before it stands.
 */
export function withMissingDependency(
  verdict: ExecutionResult,
  missing: string | undefined,
  output?: string,
): ExecutionResult {
  if (!missing) return verdict;
  const { kind: _kind, result: _result, output: _output, ...rest } = verdict;
  const claim: ExecutionResult = {
    ...rest,
    passed: false,
    result: `failed: ${missing}`,
    kind: 'error_of_run',
    ...(output !== undefined ? { output } : {}),
  };
  claims.set(claim, verdict);
  return claim;
}

/**
 * Confirms missing-dependency claims, once per problem, by running the problem's canonical
 * solution (the problems file is trusted input; a sample is not) the way the samples run: the
 * claim stands (an error of the run, which refuses the run) only when the canonical solution
 * fails with the same claim. Otherwise, or when the problem has no canonical solution, the sample
 * gets its own failure: a sample that prints `Cannot find module 'lodash'` or raises
 * `ModuleNotFoundError("No module named 'numpy'")` itself fails alone and never stops the run.
 */
export class DependencyConfirmation {
  private readonly canonical = new Map<string, Promise<ExecutionResult>>();

  /** The verdict to keep: `result` itself, or the sample's own failure when its claim is not confirmed. */
  async settle(
    item: ExecutionItem,
    result: ExecutionResult,
    run: (item: ExecutionItem) => Promise<ExecutionResult>,
  ): Promise<ExecutionResult> {
    const fallback = claims.get(result);
    if (!fallback) return result;
    const { problem, sample } = item;
    if (!problem.has_canonical_solution) return fallback;
    let reference = this.canonical.get(problem.task_id);
    if (!reference) {
      reference = run({ problem, sample: { ...sample, completion: problem.canonical_solution } });
      this.canonical.set(problem.task_id, reference);
    }
    const canonical = await reference;
    return canonical.kind === 'error_of_run' && canonical.result === result.result ? result : fallback;
  }
}
