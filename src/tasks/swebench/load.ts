/**
 * Loads SWE-bench rows (including the DockerLess variant) as tasks.
 *
 * Accepted input: a JSON list of rows, a JSON object keyed by instance_id, a
 * single row object per file, JSONL, or a folder of such files. FAIL_TO_PASS and
 * PASS_TO_PASS may be a list, a JSON-encoded string or a Python repr string.
 * DockerLess rows carry `dockerless.files` (path -> text) plus berth's
 * extensions for binary files, symlinks and executables (see RepositorySnapshot
 * and docs/running-swebench.md); rows without a snapshot take their repository
 * from a git mirror (`--repos`).
 */
import { posix } from 'node:path';
import { InputError, type InputIssue } from '../../errors.ts';
import type { RepositorySnapshot, Task } from '../task.ts';
import { listRowFiles, type RawRow, readRowFile } from './read-rows.ts';
import { harnessDirectives, harnessTestCommand, specForRow } from './specs.ts';
import { decodeTestList, TestListError } from './test-list.ts';

/** Default wall-clock limit of a test run, in seconds (SWE-bench's harness default). */
export const DEFAULT_TEST_TIMEOUT_SEC = 1800;

/** Fields every SWE-bench row must have. */
const REQUIRED = ['instance_id', 'test_patch', 'FAIL_TO_PASS', 'PASS_TO_PASS'] as const;

/** Fields the loader reads; everything else goes to `Task.metadata` unchanged. */
const CONSUMED = new Set([
  'instance_id',
  'problem_statement',
  'patch',
  'test_patch',
  'FAIL_TO_PASS',
  'PASS_TO_PASS',
  'dockerless',
  'docker_image',
  'image_name',
  'dockerfile',
  'workdir',
  'test_cmd',
]);

/**
 * Loads every row of a file or folder. Every file is read and every row
 * checked before anything is refused, so one error lists every bad row.
 * @param path a row file or a folder of row files.
 * @returns tasks in file order (files sorted by path).
 * @throws InputError listing every problem (file, line, field of each; see `InputError.all`):
 *   an unparsable file or line, a missing or ill-typed field, an unsafe snapshot path,
 *   or an instance_id seen twice.
 */
export async function loadSwebench(path: string): Promise<Task[]> {
  const files = await listRowFiles(path);
  const check = new RowCheck();
  for (const file of files) {
    const before = check.issues.length;
    let rows: RawRow[];
    try {
      rows = await readRowFile(file, { onBadLine: (issue) => check.issues.push(issue) });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      check.issues.push(...error.issues);
      continue;
    }
    for (const row of rows) check.add(row);
    // Unparsable lines and refused rows of one file, in line order.
    const ofFile = check.issues.splice(before).sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    check.issues.push(...ofFile);
  }
  return check.tasks();
}

/**
 * The row check `berth run` applies to a SWE-bench dataset, shared with the
 * dataset commands (`berth dataset controls`, `src/datasets/rows.ts`): each row
 * goes through `rowToTask`, and an instance_id seen twice is refused. Problems
 * are collected, not thrown, until `tasks()`.
 */
export class RowCheck {
  /** Every problem found so far, in input order. */
  readonly issues: InputIssue[] = [];
  private readonly loaded: Task[] = [];
  private readonly seen = new Map<string, { file: string; line: number; index?: number }>();

  /** Checks one row; a bad row adds its problem to `issues`. */
  add(row: RawRow): void {
    let task: Task;
    try {
      task = rowToTask(row);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      this.issues.push(...error.issues);
      return;
    }
    const previous = this.seen.get(task.name);
    const idLine = row.locate?.(['instance_id']) ?? row.line;
    if (previous) {
      const position = row.index !== undefined ? `[${row.index}].` : '';
      this.issues.push({
        file: row.file,
        line: idLine,
        field: `${position}instance_id`,
        message: `duplicate instance_id ${JSON.stringify(task.name)} (first seen at ${previous.file}:${previous.line}${previous.index !== undefined ? `, row [${previous.index}]` : ''})`,
      });
      return;
    }
    this.seen.set(task.name, {
      file: row.file,
      line: idLine,
      ...(row.index !== undefined ? { index: row.index } : {}),
    });
    this.loaded.push(task);
  }

  /**
   * The tasks of every row added.
   * @throws InputError listing every problem found (exit 2), when there is one.
   */
  tasks(): Task[] {
    if (this.issues.length > 0) throw InputError.all(this.issues);
    return this.loaded;
  }
}

/** True when the row looks like a SWE-bench row (used by format detection). */
export function looksLikeSwebenchRow(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.instance_id === 'string' &&
    ('test_patch' in value || 'FAIL_TO_PASS' in value)
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value;
}

/**
 * Turns one row into a task.
 * @throws InputError naming the row's file, line and the offending field.
 */
export function rowToTask(row: RawRow): Task {
  // In a JSON list or keyed object, the field is named with the row's position (`[3].FAIL_TO_PASS`),
  // since a minified file holds every row on line 1.
  const where =
    row.index !== undefined
      ? `[${row.index}].`
      : row.key !== undefined
        ? `[${JSON.stringify(row.key)}].`
        : '';
  // The field's own line when the row spreads over many lines (a pretty-printed JSON list), else the row's.
  const at = (field: string, path: ReadonlyArray<string | number> = field.split('.')) => ({
    file: row.file,
    line: row.locate?.(path) ?? row.line,
    field: `${where}${field}`,
  });
  if (!isObject(row.value))
    throw new InputError(at('instance_id'), `a row must be a JSON object, got ${typeName(row.value)}`);
  const value: Record<string, unknown> = { ...row.value };
  if (value.instance_id === undefined && row.key !== undefined) value.instance_id = row.key;
  for (const field of REQUIRED) {
    if (value[field] === undefined) throw new InputError(at(field), 'missing required field');
  }
  const str = (field: string, optional: boolean): string | undefined => {
    const v = value[field];
    if (v === undefined || (optional && v === null)) return undefined;
    if (typeof v !== 'string') throw new InputError(at(field), `expected a string, got ${typeName(v)}`);
    return v;
  };
  const instanceId = str('instance_id', false) as string;
  if (instanceId.trim() === '') throw new InputError(at('instance_id'), 'must not be empty');
  if (row.key !== undefined && row.key !== instanceId) {
    throw new InputError(
      at('instance_id'),
      `row stored under key ${JSON.stringify(row.key)} says instance_id ${JSON.stringify(instanceId)}`,
    );
  }
  const testPatch = str('test_patch', false) as string;
  const patch = str('patch', true);
  const repo = str('repo', true);
  const baseCommit = str('base_commit', true);
  const problem = str('problem_statement', true) ?? '';
  const lists: Record<'FAIL_TO_PASS' | 'PASS_TO_PASS', string[]> = { FAIL_TO_PASS: [], PASS_TO_PASS: [] };
  for (const field of ['FAIL_TO_PASS', 'PASS_TO_PASS'] as const) {
    try {
      lists[field] = decodeTestList(value[field]);
    } catch (error) {
      if (error instanceof TestListError) throw new InputError(at(field), error.message);
      throw error;
    }
  }

  const dockerless = readDockerless(value.dockerless, at);
  // Rows that name a Docker image (`docker_image`, SWE-smith's `image_name`) or carry a Dockerfile
  // run in a container holding the repository at `workdir` (SWE-bench's /testbed), without network.
  const dockerImage = str('docker_image', true) ?? str('image_name', true);
  const dockerfile = str('dockerfile', true);
  const docker =
    dockerImage !== undefined || dockerfile !== undefined
      ? {
          kind: 'docker' as const,
          ...(dockerImage !== undefined ? { image: dockerImage } : {}),
          ...(dockerfile !== undefined ? { dockerfile } : {}),
          workdir: str('workdir', true) ?? '/testbed',
          network: { mode: 'no-network' as const },
        }
      : undefined;
  // A row without a test command of its own takes SWE-bench's for its repo and version (specs.ts).
  const ownCommand = dockerless?.testCmd ?? str('test_cmd', true);
  const harness = ownCommand === undefined ? specForRow(value.repo, value.version, at) : undefined;
  const testFiles =
    dockerless?.testFiles ??
    (harness ? harnessDirectives(harness.repo, testPatch) : testDirectives(testPatch));
  const parser = dockerless?.parser ?? harness?.parser;
  const metadata: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (!CONSUMED.has(key)) metadata[key] = v;

  return {
    name: instanceId,
    format: 'swebench',
    origin: { file: row.file, line: row.line },
    instruction: problem,
    environment: docker ?? {
      kind: 'local',
      ...(dockerless?.snapshot ? { snapshot: dockerless.snapshot } : {}),
      ...(repo !== undefined ? { repo } : {}),
      ...(baseCommit !== undefined ? { baseCommit } : {}),
      ...(dockerless?.install ? { install: dockerless.install } : {}),
    },
    solution: patch !== undefined ? { kind: 'patch', patch } : { kind: 'none' },
    verifier: {
      kind: 'swebench',
      testPatch,
      testCommand:
        ownCommand ?? (harness ? harnessTestCommand(harness, { container: docker !== undefined }) : ''),
      testFiles,
      failToPass: lists.FAIL_TO_PASS,
      passToPass: lists.PASS_TO_PASS,
      ...(parser ? { parser } : {}),
      timeoutSec: dockerless?.timeoutSec ?? DEFAULT_TEST_TIMEOUT_SEC,
    },
    ...(repo !== undefined ? { source: { repository: repo } } : {}),
    metadata,
  };
}

/**
 * SWE-bench's test directives: the `b/` paths of a test patch's `diff --git`
 * headers, minus non-test extensions (one rule: `harnessDirectives`, without Django's
 * module labels). Used when a row has no `dockerless.test_files`.
 */
export function testDirectives(testPatch: string): string[] {
  return harnessDirectives('', testPatch);
}

interface Dockerless {
  snapshot?: RepositorySnapshot;
  testCmd?: string;
  testFiles?: string[];
  install?: string;
  parser?: string;
  timeoutSec?: number;
}

/**
 * A snapshot path must be relative, normalised, and stay out of `.git`, so a
 * row cannot write outside the repository folder or plant git hooks/config.
 */
export function checkSnapshotPath(path: string): string | undefined {
  if (path === '' || path.includes('\0')) return 'empty path or NUL byte';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\'))
    return 'absolute or backslash path';
  const normal = posix.normalize(path);
  if (normal !== path.replace(/\/+$/, '') && normal !== path)
    return `not a normalised path (normalises to ${normal})`;
  const parts = path.split('/');
  if (parts.some((part) => part === '..' || part === '.' || part === ''))
    return 'contains ., .. or an empty component';
  if (parts.some((part) => part.toLowerCase() === '.git')) return 'writes into .git';
  return undefined;
}

/**
 * Where a snapshot symlink leads, resolved as the kernel would inside the repository folder:
 * `..` steps and the snapshot's other symlinks met on the way are followed (so `x -> a/..`
 * with `a -> b/c` is judged by where `b/c/..` is, not by the text). Returns why the link is
 * unsafe (its target leaves the repository root, or enters `.git`, or loops), or undefined.
 */
export function checkSnapshotSymlink(linkPath: string, symlinks: Record<string, string>): string | undefined {
  const stack = linkPath.split('/').slice(0, -1);
  let pending = (symlinks[linkPath] ?? '').split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return 'its target leaves the repository root';
      stack.pop();
      continue;
    }
    stack.push(part);
    if (part.toLowerCase() === '.git' && stack.length === 1) return 'its target is inside .git';
    const link = symlinks[stack.join('/')];
    if (link !== undefined) {
      if (++hops > 40) return 'a loop of symlinks';
      if (link.startsWith('/')) return 'its target leaves the repository root';
      stack.pop();
      pending = [...link.split('/'), ...pending];
    }
  }
  return undefined;
}

function readDockerless(
  raw: unknown,
  at: (field: string, path?: ReadonlyArray<string | number>) => { file: string; line: number; field: string },
): Dockerless | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw new InputError(at('dockerless'), `expected an object, got ${typeName(raw)}`);
  const out: Dockerless = {};
  const pathMap = (
    field: string,
    check?: (v: unknown) => string | undefined,
  ): Record<string, string> | undefined => {
    const v = raw[field];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v))
      throw new InputError(
        at(`dockerless.${field}`),
        `expected an object mapping paths to strings, got ${typeName(v)}`,
      );
    for (const [path, content] of Object.entries(v)) {
      const bad = checkSnapshotPath(path);
      if (bad)
        throw new InputError(
          at(`dockerless.${field}[${JSON.stringify(path)}]`, ['dockerless', field, path]),
          `unsafe path: ${bad}`,
        );
      if (typeof content !== 'string')
        throw new InputError(
          at(`dockerless.${field}[${JSON.stringify(path)}]`, ['dockerless', field, path]),
          `expected a string, got ${typeName(content)}`,
        );
      const problem = check?.(content);
      if (problem)
        throw new InputError(
          at(`dockerless.${field}[${JSON.stringify(path)}]`, ['dockerless', field, path]),
          problem,
        );
    }
    return v as Record<string, string>;
  };
  const files = pathMap('files');
  const binaryFiles = pathMap('binary_files', (c) =>
    /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(c as string) ? undefined : 'not base64',
  );
  const symlinks = pathMap('symlinks', (c) => {
    const target = c as string;
    if (target === '' || target.startsWith('/')) return 'a symlink target must be a non-empty relative path';
    return undefined;
  });
  let executables: string[] | undefined;
  if (raw.executables !== undefined && raw.executables !== null) {
    if (!Array.isArray(raw.executables) || raw.executables.some((e) => typeof e !== 'string')) {
      throw new InputError(at('dockerless.executables'), 'expected a list of paths');
    }
    executables = raw.executables as string[];
  }
  if (files || binaryFiles || symlinks) {
    const all = new Map<string, string>();
    for (const [field, map] of [
      ['files', files],
      ['binary_files', binaryFiles],
      ['symlinks', symlinks],
    ] as const) {
      for (const path of Object.keys(map ?? {})) {
        const other = all.get(path);
        if (other)
          throw new InputError(
            at(`dockerless.${field}[${JSON.stringify(path)}]`, ['dockerless', field, path]),
            `path also given in dockerless.${other}`,
          );
        all.set(path, field);
      }
    }
    for (const path of Object.keys(symlinks ?? {})) {
      const unsafe = checkSnapshotSymlink(path, symlinks ?? {});
      if (unsafe)
        throw new InputError(
          at(`dockerless.symlinks[${JSON.stringify(path)}]`, ['dockerless', 'symlinks', path]),
          `unsafe symlink target ${JSON.stringify(symlinks?.[path])}: ${unsafe}`,
        );
    }
    for (const path of executables ?? []) {
      const kind = all.get(path);
      if (kind !== 'files' && kind !== 'binary_files') {
        throw new InputError(
          at('dockerless.executables'),
          `${JSON.stringify(path)} is not a file of the snapshot`,
        );
      }
    }
    out.snapshot = {
      files: files ?? {},
      ...(binaryFiles ? { binaryFiles } : {}),
      ...(symlinks ? { symlinks } : {}),
      ...(executables ? { executables } : {}),
    };
  }
  const optionalString = (field: string): string | undefined => {
    const v = raw[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string')
      throw new InputError(at(`dockerless.${field}`), `expected a string, got ${typeName(v)}`);
    return v;
  };
  out.testCmd = optionalString('test_cmd');
  if (out.testCmd !== undefined && out.testCmd.trim() === '') out.testCmd = undefined;
  out.install = optionalString('install');
  out.parser = optionalString('parser');
  if (raw.test_files !== undefined && raw.test_files !== null) {
    try {
      // A plain string that is not an encoded list is one path (a seed-style generator writes one).
      const value = raw.test_files;
      out.testFiles =
        typeof value === 'string' && !value.trim().startsWith('[') ? [value.trim()] : decodeTestList(value);
      if (out.testFiles.some((f) => f.trim() === ''))
        throw new Error('an empty path (give one path, or a list of paths)');
    } catch (error) {
      throw new InputError(
        at('dockerless.test_files'),
        error instanceof Error ? error.message : String(error),
      );
    }
  }
  if (raw.timeout_sec !== undefined && raw.timeout_sec !== null) {
    const t = raw.timeout_sec;
    if (typeof t !== 'number' || !(t > 0))
      throw new InputError(at('dockerless.timeout_sec'), 'expected a positive number of seconds');
    out.timeoutSec = t;
  }
  return out;
}
