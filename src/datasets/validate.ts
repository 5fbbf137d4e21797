/**
 * `berth dataset validate`: checks a SWE-bench / DockerLess dataset the way the
 * seed's `tools/validate.py` does, and runs it.
 *
 * Per row: the schema; FAIL_TO_PASS not empty and disjoint from PASS_TO_PASS;
 * `test_patch` touches test files only (`isTestPath`); the gold patch and the
 * test patch apply to the base, and the test patch on top of gold; then, when
 * the row can run here (a snapshot in `dockerless.files`, or a mirror under
 * `--repos`, and a `dockerless.test_cmd`), the gold patch resolves and the
 * empty patch does not, graded with SWE-bench's rules.
 *
 * Prompt tokens are estimated as characters / 4 (the usual rule of thumb for
 * English and code with BPE tokenizers; it is an estimate, not a tokenizer) over
 * what a model is shown: the problem statement plus the snapshot's files (for
 * rows without a snapshot, the problem statement alone).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Agent } from '../agents/agent.ts';
import { NopAgent } from '../agents/nop.ts';
import { OracleAgent } from '../agents/oracle.ts';
import { createProviders } from '../environments/registry.ts';
import { InputError } from '../errors.ts';
import { rowToTask } from '../tasks/swebench/load.ts';
import type { RepositorySnapshot } from '../tasks/task.ts';
import { runTrialWith } from '../trials/trial.ts';
import { createVerifiers } from '../verifiers/registry.ts';
import { findMirror } from './build.ts';
import { isTestPath, touchedPaths } from './patches.ts';
import { type RowAt, rawRowOf, readTestList } from './rows.ts';
import { type BaseSource, Workspace } from './workspace.ts';

const testList = z.union([z.array(z.string()), z.string()]);

/** The fields validate requires. Other fields are allowed and kept. */
export const rowSchema = z.looseObject({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'expected owner/name'),
  base_commit: z.string().min(1),
  patch: z.string().min(1, 'the gold patch is empty'),
  test_patch: z.string().min(1, 'the test patch is empty'),
  problem_statement: z.string().min(1),
  FAIL_TO_PASS: testList,
  PASS_TO_PASS: testList,
  dockerless: z
    .looseObject({
      files: z.record(z.string(), z.string()).optional(),
      test_cmd: z.string().refine((cmd) => cmd.includes('{tests}'), 'test_cmd has no {tests} placeholder'),
      // One path as a plain string, or a list (loaded as src/tasks/swebench/load.ts reads it).
      test_files: z.union([z.string().trim().min(1), z.array(z.string()).min(1)]),
      install: z.string().optional(),
      parser: z.string().optional(),
    })
    .optional(),
});

/** One check's outcome on one row. */
export interface Check {
  name: 'schema' | 'lists' | 'test-files-only' | 'patches-apply' | 'gold-resolves' | 'empty-fails';
  ok: boolean;
  /** Not run (e.g. no snapshot and no mirror); `ok` is then true. */
  skipped?: boolean;
  message?: string;
}

export interface RowValidation {
  instance_id: string;
  line?: number;
  checks: Check[];
  /** True only when every check ran and passed (a row with `notChecked` is not valid). */
  ok: boolean;
  /** Why some checks could not run here (no snapshot and no mirror, no test command); the row is then not valid. */
  notChecked?: string;
  /** Estimated prompt tokens (characters / 4) of the problem statement and the snapshot. */
  promptTokens: number;
  /** Estimated tokens of the gold patch. */
  patchTokens: number;
  failToPass: number;
  passToPass: number;
  /** F2P and P2P passed with gold and with the empty patch, when run. */
  gold?: { f2p: number; p2p: number };
  empty?: { f2p: number; p2p: number };
}

/** Tokens estimated as characters / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export async function validateRow(
  at: RowAt,
  options: { reposDir?: string; run: boolean },
): Promise<RowValidation> {
  const row = at.row;
  const id = String(row.instance_id);
  const checks: Check[] = [];
  const result: RowValidation = {
    instance_id: id,
    line: at.line,
    checks,
    ok: false,
    promptTokens: 0,
    patchTokens: 0,
    failToPass: 0,
    passToPass: 0,
  };
  // A field as `berth run` names it (`[3].FAIL_TO_PASS` in a JSON list), on its own line when known.
  const prefix =
    at.index !== undefined ? `[${at.index}].` : at.key !== undefined ? `[${JSON.stringify(at.key)}].` : '';
  const where = (path: Array<string | number>) => ({
    file: at.file,
    line: at.locate?.(path) ?? at.line,
    field: `${prefix}${path.join('.') || '(row)'}`,
  });
  // The loader first: a row `berth run` refuses gets the very message `berth run` prints.
  let hasCommand = false;
  let snapshot: RepositorySnapshot | undefined;
  try {
    const task = rowToTask(rawRowOf(at));
    if (task.environment.kind === 'local') snapshot = task.environment.snapshot;
    // The row's own test command, or SWE-bench's for its repo and version.
    hasCommand = task.verifier.kind === 'swebench' && task.verifier.testCommand.trim() !== '';
  } catch (error) {
    checks.push({ name: 'schema', ok: false, message: (error as Error).message });
    return result;
  }
  // Then what authoring requires on top (repo, base_commit, a non-empty gold patch...).
  const parsed = rowSchema.safeParse(row);
  if (!parsed.success) {
    checks.push({
      name: 'schema',
      ok: false,
      message: parsed.error.issues
        .map((issue) => new InputError(where(issue.path as Array<string | number>), issue.message).message)
        .join('; '),
    });
    return result;
  }
  checks.push({ name: 'schema', ok: true });
  const data = parsed.data;
  let f2p: string[] = [];
  let p2p: string[] = [];
  try {
    f2p = readTestList(data.FAIL_TO_PASS, where(['FAIL_TO_PASS']));
    p2p = readTestList(data.PASS_TO_PASS, where(['PASS_TO_PASS']));
    const both = f2p.filter((test) => p2p.includes(test));
    const problems = [
      ...(f2p.length === 0 ? ['FAIL_TO_PASS is empty'] : []),
      ...(both.length > 0 ? [`in both lists: ${both.slice(0, 5).join(', ')}`] : []),
    ];
    checks.push({ name: 'lists', ok: problems.length === 0, message: problems.join('; ') || undefined });
  } catch (error) {
    checks.push({ name: 'lists', ok: false, message: (error as Error).message });
  }
  result.failToPass = f2p.length;
  result.passToPass = p2p.length;
  const files = data.dockerless?.files;
  result.promptTokens = estimateTokens(
    data.problem_statement +
      (files
        ? Object.entries(files)
            .map(([path, content]) => path + content)
            .join('')
        : ''),
  );
  result.patchTokens = estimateTokens(data.patch);
  try {
    const nonTest = touchedPaths(data.test_patch).filter((path) => !isTestPath(path));
    checks.push({
      name: 'test-files-only',
      ok: nonTest.length === 0,
      message: nonTest.length ? `test_patch touches non-test files: ${nonTest.join(', ')}` : undefined,
    });
  } catch (error) {
    // A path that is not UTF-8 text (UndecodablePathError): berth would refuse the row.
    checks.push({ name: 'test-files-only', ok: false, message: `test_patch: ${(error as Error).message}` });
  }

  let base: BaseSource | undefined;
  let why = '';
  if (snapshot) base = { kind: 'files', snapshot };
  else if (options.reposDir) {
    try {
      base = {
        kind: 'git',
        repoDir: await findMirror(data.repo, options.reposDir, at.file),
        commit: data.base_commit,
      };
    } catch (error) {
      why = (error as Error).message;
    }
  } else why = `no snapshot (dockerless.files): use --repos DIR holding a git mirror of ${data.repo}`;
  if (!base) {
    const reasons = [why, ...(options.run && !hasCommand ? ['no test command (dockerless.test_cmd)'] : [])];
    result.notChecked = reasons.join('; ');
    for (const name of ['patches-apply', 'gold-resolves', 'empty-fails'] as const)
      checks.push({ name, ok: true, skipped: true, message: why });
    result.ok = false;
    return result;
  }

  const workspace = await Workspace.create(base);
  try {
    const problems: string[] = [];
    for (const [label, patch] of [
      ['gold patch', data.patch],
      ['test patch', data.test_patch],
    ] as const) {
      const applied = await workspace.apply(patch, { check: true });
      if (!applied.ok) problems.push(`${label} does not apply to the base: ${lastLine(applied.log)}`);
    }
    if (problems.length === 0) {
      await workspace.apply(data.patch);
      const stacked = await workspace.apply(data.test_patch, { check: true });
      if (!stacked.ok) problems.push(`test patch does not apply on top of gold: ${lastLine(stacked.log)}`);
      await workspace.reset();
    }
    checks.push({
      name: 'patches-apply',
      ok: problems.length === 0,
      message: problems.join('; ') || undefined,
    });
    if (!options.run || problems.length > 0 || !hasCommand) {
      const message = !options.run
        ? 'not run (--no-run)'
        : problems.length
          ? 'patches do not apply'
          : 'no dockerless.test_cmd';
      checks.push({ name: 'gold-resolves', ok: true, skipped: true, message });
      checks.push({ name: 'empty-fails', ok: true, skipped: true, message });
      if (options.run && problems.length === 0) result.notChecked = 'no test command (dockerless.test_cmd)';
    } else {
      await workspace.dispose();
      const gold = await runThroughTrial(at, new OracleAgent(), options);
      const empty = await runThroughTrial(at, new NopAgent(), options);
      result.gold = { f2p: gold.f2p, p2p: gold.p2p };
      result.empty = { f2p: empty.f2p, p2p: empty.p2p };
      checks.push({
        name: 'gold-resolves',
        ok: gold.resolved,
        message: gold.resolved
          ? undefined
          : `gold: ${gold.status} F2P ${gold.f2p}/${f2p.length}, P2P ${gold.p2p}/${p2p.length}${gold.note ? ` (${gold.note})` : ''}`,
      });
      checks.push({
        name: 'empty-fails',
        ok: !empty.resolved,
        message: empty.resolved
          ? 'the empty patch resolves the instance: FAIL_TO_PASS tests pass without the fix'
          : undefined,
      });
    }
  } finally {
    await workspace.dispose();
  }
  result.ok = checks.every((check) => check.ok) && result.notChecked === undefined;
  return result;
}

/**
 * Runs one row through the trial engine (the same path as `berth run`), empty
 * patches verified too, in a temporary jobs folder that is removed after.
 */
async function runThroughTrial(
  at: RowAt,
  agent: Agent,
  options: { reposDir?: string },
): Promise<{ resolved: boolean; status: string; f2p: number; p2p: number; note: string }> {
  const task = rowToTask({ value: at.row, file: at.file, line: at.line ?? 1 });
  const jobDir = await mkdtemp(join(tmpdir(), 'berth-validate-'));
  try {
    const result = await runTrialWith({
      task,
      agent,
      attempt: 1,
      trialName: `${task.name}__${agent.info.name}`,
      trialDir: join(jobDir, `${task.name}__${agent.info.name}`),
      jobId: `validate-${process.pid}`,
      source: 'validate',
      providers: createProviders(options.reposDir ? { reposDir: options.reposDir } : {}),
      verifiers: createVerifiers(),
      verifyEmptyPatch: true,
    });
    return {
      resolved: result.berth.resolved,
      status: result.berth.status,
      f2p: result.berth.FAIL_TO_PASS?.passed ?? 0,
      p2p: result.berth.PASS_TO_PASS?.passed ?? 0,
      note: result.berth.note,
    };
  } finally {
    await rm(jobDir, { recursive: true, force: true });
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
