/**
 * berth's error classes. Every error the CLI can show carries an exit code:
 * 2 for bad usage or bad input (the message starts `FILE:LINE:COL: field: `),
 * 1 for internal errors. A crashed trial is recorded in its result, never thrown
 * past the job.
 */

const marker = Symbol.for('berth.error');

/** Base class: a stable `code` string and the process exit code the CLI uses. */
export class BerthError extends Error {
  readonly [marker] = true;
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, options?: { exitCode?: number; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options?.exitCode ?? 1;
  }

  /** True for any BerthError, even across duplicated package copies. */
  static isInstance(value: unknown): value is BerthError {
    return typeof value === 'object' && value !== null && marker in value;
  }
}

/** Where a piece of bad input sits: a file, optionally a 1-based line and column, and a field name. */
export interface InputLocation {
  file: string;
  line?: number;
  /** 1-based column on `line` (a TOML or YAML syntax error's position). */
  column?: number;
  field?: string;
}

/** One problem in a piece of input, where it sits and what is wrong (for errors that report several). */
export interface InputIssue extends InputLocation {
  message: string;
}

/**
 * `FILE:LINE:COL: field`, the prefix every input message starts with (the compilers' form; a part
 * not known is left out: `FILE:LINE`, `FILE: field`).
 */
export function describeLocation(location: InputLocation): string {
  const line =
    location.line !== undefined
      ? `:${location.line}${location.column !== undefined ? `:${location.column}` : ''}`
      : '';
  return `${location.file}${line}${location.field ? `: ${location.field}` : ''}`;
}

/** `FILE:LINE:COL: field: message`: one input problem (an error's or a warning's) in one line. */
export function describeIssue(issue: InputIssue): string {
  return `${describeLocation(issue)}: ${issue.message}`;
}

/** How many issues the message of `InputError.all` lists (the rest are counted). */
export const INPUT_ISSUES_LISTED = 20;

/** Bad input (an unparsable line, a missing field, a duplicate id...). Exit code 2. */
export class InputError extends BerthError {
  /** Where the (first) problem sits. */
  readonly location: InputLocation;
  /** Every problem found (one unless the input was checked whole, see `InputError.all`). */
  readonly issues: readonly InputIssue[];

  constructor(location: InputLocation, message: string, options?: { cause?: unknown }) {
    super('BERTH_BAD_INPUT', `${describeLocation(location)}: ${message}`, {
      exitCode: 2,
      cause: options?.cause,
    });
    this.location = location;
    this.issues = [{ ...location, message }];
  }

  /**
   * One error reporting every problem found in an input: with one issue the
   * same as `new InputError`; with several, the message is a count line (naming
   * the file when every issue is in one file, else `N problems in M files`),
   * then one line per issue in the usual `FILE:LINE:COL: field: message`
   * form, the first `INPUT_ISSUES_LISTED` of them followed by `... and K more`.
   * `issues` always holds them all; `location` is the first issue's.
   * @throws Error when `issues` is empty (a caller bug).
   */
  static all(issues: readonly InputIssue[], options?: { cause?: unknown }): InputError {
    const [first] = issues;
    if (first === undefined) throw new Error('InputError.all needs at least one issue');
    const { message, ...location } = first;
    const error = new InputError(location, message, options);
    if (issues.length === 1) return error;
    const files = new Set(issues.map((issue) => issue.file)).size;
    const listed = issues.slice(0, INPUT_ISSUES_LISTED);
    error.message = [
      files === 1
        ? `${first.file}: ${issues.length} problems:`
        : `${issues.length} problems in ${files} files:`,
      ...listed.map((issue) => `  ${describeIssue(issue)}`),
      ...(issues.length > listed.length ? [`  ... and ${issues.length - listed.length} more`] : []),
    ].join('\n');
    (error as { issues: readonly InputIssue[] }).issues = [...issues];
    return error;
  }
}

/** Bad command-line usage (unknown agent, conflicting flags...). Exit code 2. */
export class UsageError extends BerthError {
  constructor(message: string) {
    super('BERTH_USAGE', message, { exitCode: 2 });
  }
}

/** A prerequisite (a toolchain, Docker, git...) is missing; the message says what to install. Exit code 2. */
export class PrerequisiteError extends BerthError {
  constructor(message: string) {
    super('BERTH_PREREQUISITE', message, { exitCode: 2 });
  }
}
