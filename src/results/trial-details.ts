/**
 * Everything a trial's page shows: the instruction, the trajectory, the patch, each test's
 * verdict, the reward files, the exception and the logs, read from the trial folder through
 * src/results/safe-read.ts (no symbolic link followed, every file capped).
 */
import { lstat, readdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { TrialDetails, TrialFile } from './model.ts';
import { isInsidePath, readHeadTail, readInside, readJsonInside, statInside } from './safe-read.ts';
import { testsOf, verdictsInReport } from './trial-record.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** How much of each kind of file a page carries (bytes; text is cut to a head and a tail). */
export interface DetailLimits {
  /** Head and tail of each log. */
  logHead: number;
  logTail: number;
  /** Head and tail of the patch. */
  patchHead: number;
  patchTail: number;
  /** Longest string kept in the trajectory (characters); longer ones are cut in the middle. */
  trajectoryText: number;
  /** Largest trajectory.json parsed. */
  trajectoryBytes: number;
  /** Most log files shown; the rest are listed as links. */
  maxLogs: number;
  /** Whether the page carries the trial's result.json as written (else it links to it). */
  rawResult?: boolean;
}

/** Limits for the HTML report (one file holding every trial). */
export const REPORT_LIMITS: DetailLimits = {
  logHead: 4 * 1024,
  logTail: 12 * 1024,
  patchHead: 48 * 1024,
  patchTail: 16 * 1024,
  trajectoryText: 4 * 1024,
  trajectoryBytes: 32 * 1024 * 1024,
  maxLogs: 12,
};

/**
 * Limits for a report of `trials` trials: the report limits up to 200 trials, a quarter of them
 * for larger jobs, so a 1,000-trial report stays near 10 MB (the full files are a link away).
 */
export function reportLimitsFor(trials: number): DetailLimits {
  if (trials <= 200) return REPORT_LIMITS;
  return {
    ...REPORT_LIMITS,
    logHead: 1024,
    logTail: 3 * 1024,
    patchHead: 12 * 1024,
    patchTail: 4 * 1024,
    trajectoryText: 1024,
    maxLogs: 6,
  };
}

/** Limits for the viewer (one trial per request). */
export const VIEWER_LIMITS: DetailLimits = {
  logHead: 64 * 1024,
  logTail: 192 * 1024,
  patchHead: 768 * 1024,
  patchTail: 256 * 1024,
  trajectoryText: 64 * 1024,
  trajectoryBytes: 64 * 1024 * 1024,
  maxLogs: 40,
  rawResult: true,
};

/** Files that have a place of their own on the page (not repeated among the logs). */
const OWN_PLACE = new Set([
  'result.json',
  'config.json',
  'instruction.md',
  'agent/instruction.md',
  'agent/trajectory.json',
  'verifier/reward.txt',
  'verifier/reward.json',
]);

/** Extensions shown as text among the logs. */
const TEXT_FILE = /\.(txt|log|out|err|diff|patch|json|jsonl|md|xml|cast|yaml|yml|toml|sh)$|^[^.]+$/i;

/** Files of a trial folder (relative paths), breadth first, no symbolic link followed. */
async function listFiles(root: string, maxFiles: number): Promise<Array<{ path: string; size: number }>> {
  const files: Array<{ path: string; size: number }> = [];
  const queue: Array<{ relative: string; depth: number }> = [{ relative: '', depth: 0 }];
  while (queue.length > 0 && files.length < maxFiles) {
    const { relative, depth } = queue.shift() as { relative: string; depth: number };
    const entries = await readdir(join(root, relative), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory() && depth < 5) queue.push({ relative: path, depth: depth + 1 });
      else if (entry.isFile()) {
        // readdir's entry says it is a regular file (not a link); lstat gives its size.
        const stat = await lstat(join(root, path)).catch(() => undefined);
        if (stat?.isFile()) files.push({ path, size: stat.size });
        if (files.length >= maxFiles) break;
      }
    }
  }
  return files;
}

/** The file's parents were listed by `listFiles` (folders, not links): only the file itself is checked. */
const LISTED = { parentsChecked: true };

async function fileOf(root: string, path: string, head: number, tail: number): Promise<TrialFile | null> {
  const read = await readHeadTail(root, path, head, tail, LISTED);
  return read ? { path, ...read } : null;
}

const looksBinary = (text: string) => text.includes('\u0000');

/** Deepest nesting kept in a trajectory; deeper values are replaced by a note (no recursion bomb). */
const MAX_DEPTH = 48;

/**
 * A copy of a JSON value with every string longer than `max` cut in the middle and anything nested
 * deeper than MAX_DEPTH replaced by a note (`cut.count` counts the cuts).
 */
export function cutLongStrings(value: unknown, max: number, cut = { count: 0 }, depth = 0): unknown {
  if (typeof value === 'string') {
    if (value.length <= max) return value;
    cut.count++;
    const keep = Math.floor(max / 2);
    return `${value.slice(0, keep)}\n… ${value.length - 2 * keep} characters cut (see the file) …\n${value.slice(-keep)}`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) {
    cut.count++;
    return '(nested too deep to show; see the file)';
  }
  if (Array.isArray(value)) return value.map((item) => cutLongStrings(item, max, cut, depth + 1));
  const copy: Json = {};
  for (const [key, item] of Object.entries(value)) copy[key] = cutLongStrings(item, max, cut, depth + 1);
  return copy;
}

/** The first user message of an ATIF trajectory. */
function instructionFromTrajectory(trajectory: unknown): string | null {
  if (!isObject(trajectory) || !Array.isArray(trajectory.steps)) return null;
  for (const step of trajectory.steps) {
    if (!isObject(step) || step.source !== 'user') continue;
    if (typeof step.message === 'string') return step.message;
    if (Array.isArray(step.message))
      return step.message
        .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
        .join('\n');
  }
  return null;
}

/**
 * The instruction from the task the trial names in its config.json (`berth.task_origin`, an
 * earlier berth's `task_origin`): a Harbor task's instruction.md, or the `problem_statement` of
 * the row on the given line of a JSONL file.
 */
async function instructionFromOrigin(config: unknown): Promise<string | null> {
  if (!isObject(config)) return null;
  const origin = isObject(config.berth) ? config.berth.task_origin : config.task_origin;
  if (!isObject(origin)) return null;
  const file = str(origin.file);
  if (!file) return null;
  const path = isAbsolute(file) ? file : resolve(file);
  if (basename(path) === 'task.toml') {
    const read = await readInside(dirname(path), 'instruction.md', 1024 * 1024);
    return read?.text ?? null;
  }
  const line = origin.line;
  if (typeof line !== 'number') return null;
  const read = await readInside(dirname(path), basename(path), 256 * 1024 * 1024);
  if (!read || read.truncated) return null;
  const text = read.text.split('\n')[line - 1];
  try {
    const row = JSON.parse(text ?? '');
    return isObject(row) ? str(row.problem_statement) : null;
  } catch {
    return null;
  }
}

/**
 * Reads what a trial's page shows.
 * @returns undefined when `trialName` is not a plain folder name of the job.
 */
export async function readTrialDetails(
  jobDir: string,
  trialName: string,
  limits: DetailLimits,
): Promise<TrialDetails | undefined> {
  if (!isInsidePath(trialName) || trialName.includes('/')) return undefined;
  const root = join(resolve(jobDir), trialName);
  const job = resolve(jobDir);
  const folder = await statInside(job, trialName);
  if (!folder?.isDirectory) return undefined;
  // One listing of the folder; only files it holds are opened.
  const all = await listFiles(root, 500);
  const present = new Set(all.map((file) => file.path));
  const has = (path: string | null) => path !== null && present.has(path);
  const result = has('result.json')
    ? await readJsonInside(root, 'result.json', 16 * 1024 * 1024, LISTED)
    : undefined;
  const raw = isObject(result) ? result : {};
  const berth = isObject(raw.berth) ? raw.berth : {};
  const files = isObject(berth.files) ? berth.files : {};

  // Trajectory.
  let trajectory: unknown = null;
  let trajectoryNote: string | null = null;
  const trajectoryFile = has('agent/trajectory.json')
    ? await readInside(root, 'agent/trajectory.json', limits.trajectoryBytes, LISTED)
    : undefined;
  if (!trajectoryFile) trajectoryNote = 'This agent recorded no trajectory (agent/trajectory.json).';
  else if (trajectoryFile.truncated)
    trajectoryNote = `agent/trajectory.json is ${trajectoryFile.size} bytes, more than this page reads; open the file.`;
  else {
    try {
      const cut = { count: 0 };
      trajectory = cutLongStrings(JSON.parse(trajectoryFile.text), limits.trajectoryText, cut);
      if (cut.count > 0)
        trajectoryNote = `${cut.count} long or deeply nested value(s) cut (texts to ${limits.trajectoryText} characters).`;
    } catch (error) {
      trajectoryNote = `agent/trajectory.json is not JSON (${(error as Error).message}).`;
    }
  }

  // Instruction.
  let instruction: string | null = null;
  let instructionSource: string | null = null;
  for (const path of ['instruction.md', 'agent/instruction.md']) {
    const read = has(path) ? await readInside(root, path, 1024 * 1024, LISTED) : undefined;
    if (read) {
      instruction = read.text;
      instructionSource = path;
      break;
    }
  }
  if (instruction === null) {
    instruction = instructionFromTrajectory(trajectory);
    if (instruction !== null) instructionSource = 'the trajectory';
  }
  if (instruction === null) {
    const config = has('config.json')
      ? await readJsonInside(root, 'config.json', 1024 * 1024, LISTED)
      : undefined;
    instruction = await instructionFromOrigin(config);
    if (instruction !== null) instructionSource = 'the task (config.json berth.task_origin)';
  }

  // Patch, tests, rewards.
  const patchPath = [str(files.patch), 'agent/patch.diff', 'verifier/agent.diff'].find((p) => p !== null);
  let patch: TrialFile | null = null;
  for (const path of [str(files.patch), 'agent/patch.diff', 'verifier/agent.diff']) {
    if (!has(path)) continue;
    patch = await fileOf(root, path as string, limits.patchHead, limits.patchTail);
    if (patch) break;
  }
  const report = !verdictsInReport(raw)
    ? undefined
    : has('verifier/report.json')
      ? await readJsonInside(root, 'verifier/report.json', 16 * 1024 * 1024, LISTED)
      : undefined;
  const tests = testsOf(raw, report);
  const rewardFiles: TrialFile[] = [];
  for (const path of ['verifier/reward.txt', 'verifier/reward.json']) {
    const file = has(path) ? await fileOf(root, path, 16 * 1024, 0) : null;
    if (file) rewardFiles.push(file);
  }
  const info = isObject(raw.exception_info) ? raw.exception_info : null;
  const steps = Array.isArray(raw.step_results)
    ? raw.step_results.filter(isObject).map((step, index) => {
        const verifier = isObject(step.verifier_result) ? step.verifier_result : {};
        const exception = isObject(step.exception_info) ? step.exception_info : null;
        return {
          name: str(step.step_name) ?? `step ${index + 1}`,
          rewards: isObject(verifier.rewards) ? (verifier.rewards as Record<string, number>) : null,
          exception: exception
            ? `${str(exception.exception_type) ?? 'Error'}: ${str(exception.exception_message) ?? ''}`
            : null,
        };
      })
    : [];

  // Logs: every other text file, the most telling first (verifier, then agent, then the rest).
  const shown = new Set([...OWN_PLACE, patch?.path ?? patchPath ?? '']);
  // The tests' output first: that is where a failure shows.
  const rank = (path: string) =>
    /^verifier\/test-(stdout|output)/.test(path)
      ? 0
      : path.startsWith('verifier/')
        ? 1
        : path.startsWith('agent/')
          ? 2
          : 3;
  const candidates = all
    .filter((file) => !shown.has(file.path) && TEXT_FILE.test(basename(file.path)))
    .sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path));
  const logs: TrialFile[] = [];
  const other: Array<{ path: string; size: number }> = [];
  for (const candidate of candidates) {
    if (logs.length >= limits.maxLogs) {
      other.push(candidate);
      continue;
    }
    const file = await fileOf(root, candidate.path, limits.logHead, limits.logTail);
    if (file && !looksBinary(file.head)) logs.push(file);
    else other.push(candidate);
  }
  for (const file of all) if (!shown.has(file.path) && !TEXT_FILE.test(basename(file.path))) other.push(file);

  const rawSize = all.find((file) => file.path === 'result.json')?.size ?? Number.POSITIVE_INFINITY;
  return {
    name: trialName,
    instruction,
    instruction_source: instructionSource,
    trajectory,
    trajectory_note: trajectoryNote,
    patch,
    tests,
    reward_files: rewardFiles,
    exception: info
      ? {
          type: str(info.exception_type) ?? 'Error',
          message: typeof info.exception_message === 'string' ? info.exception_message : '',
          traceback: typeof info.exception_traceback === 'string' ? info.exception_traceback : '',
          occurred_at: str(info.occurred_at),
        }
      : null,
    steps,
    logs,
    other_files: other,
    result: limits.rawResult && rawSize <= 512 * 1024 ? raw : null,
  };
}
