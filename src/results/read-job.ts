/**
 * Reads a job folder into a JobRecord: berth's `run` (result.json with `stats` and per-trial
 * result.json files with a `berth` block), berth's `multilingual run` (rows with task types and
 * languages), Harbor's own jobs, and older berth versions (no `events.jsonl`, no state file).
 * A trial folder with a config.json and no result.json is running (or was cut off). When the
 * job has an event log (`events.jsonl`), the phases of running trials come from it.
 */
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { InputError } from '../errors.ts';
import { lockHolder } from '../jobs/lock.ts';
import { parseEventLine } from '../trials/events.ts';
import type { JobRecord, TrialRecord } from './model.ts';
import { readHeadTail, readInside, readJsonInside, readTailSync, statInside } from './safe-read.ts';
import {
  blankTrialRecord,
  lastLine,
  trialRecordFromResult,
  verdictsInReport,
  wantsOutputTail,
} from './trial-record.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Largest result.json / config.json read (bytes); a larger one is reported as damaged. */
const MAX_STATE_BYTES = 64 * 1024 * 1024;
/** Largest event log read (bytes); the first this many bytes are used. */
const MAX_EVENTS_BYTES = 256 * 1024 * 1024;

/** What the event log says about trials still running. */
interface EventState {
  /** Trials started and not ended, with the phase each is in. */
  running: Map<string, string | null>;
  ended: boolean;
  started: boolean;
}

/**
 * Reads `events.jsonl` (src/trials/events.ts, docs/events.md) as far as it is complete (a
 * crashed run may leave half a line): which trials are running, in which phase.
 */
export function readEventLines(text: string): EventState {
  const state: EventState = { running: new Map(), ended: false, started: false };
  for (const line of text.split('\n')) {
    // Lines cut by a kill, and event types or versions this berth does not know, are skipped.
    const event = parseEventLine(line);
    if (!event) continue;
    switch (event.type) {
      case 'job-start':
        state.started = true;
        break;
      case 'job-end':
        state.ended = true;
        break;
      case 'trial-start':
        state.running.set(event.trial, null);
        break;
      case 'phase-start':
        state.running.set(event.trial, event.step ? `${event.phase} (${event.step})` : event.phase);
        break;
      case 'trial-end':
        state.running.delete(event.trial);
        break;
    }
  }
  return state;
}

/** The last line of the tests' output in a trial folder (Harbor's test-stdout.txt, berth's test-output.txt). */
export async function testOutputTail(trialDir: string): Promise<string | null> {
  for (const path of ['verifier/test-stdout.txt', 'verifier/test-output.txt']) {
    const read = await readHeadTail(trialDir, path, 0, 2048);
    if (read) return lastLine(read.omitted > 0 ? read.tail : read.head);
  }
  return null;
}

/** `testOutputTail`, synchronously (the console words a trial's line as it ends). */
export function testOutputTailSync(trialDir: string): string | null {
  for (const path of ['verifier/test-stdout.txt', 'verifier/test-output.txt']) {
    const tail = readTailSync(trialDir, path, 2048);
    if (tail !== undefined) return lastLine(tail);
  }
  return null;
}

/** Whether the job's lock (`.berth.lock`) is held by a running process (read capped, no link followed). */
async function lockHeld(dir: string): Promise<boolean> {
  const lock = await readInside(dir, '.berth.lock', 256);
  return lock !== undefined && (await lockHolder(lock.text)) !== undefined;
}

/**
 * A trial folder without a result: running while the job runs, else cut off. Its config.json is
 * Harbor's TrialConfig with berth's part under `berth` (an earlier berth wrote `task_name`,
 * `attempt`, `source` and `agent.model_name` at the top level; Harbor, `task.path`).
 */
function unfinishedTrial(name: string, config: Json, running: boolean, phase: string | null): TrialRecord {
  const agent = isObject(config.agent) ? config.agent : {};
  const berth = isObject(config.berth) ? config.berth : config;
  const task = isObject(config.task) ? config.task : {};
  const taskName =
    str(berth.task_name) ?? (str(task.path) ? basename(str(task.path) as string) : null) ?? name;
  return {
    ...blankTrialRecord(name, taskName, running ? 'running' : 'cancelled'),
    attempt: typeof berth.attempt === 'number' ? berth.attempt : 1,
    why: running
      ? `running${phase ? ` (${phase.replace('_', ' ')})` : ''}`
      : 'no result: the job stopped while this trial ran',
    agent: str(agent.name) ?? 'unknown',
    model: str(agent.model_name),
    dataset: str(config.source) ?? str(task.source),
    current_phase: phase,
  };
}

/**
 * Reads a job folder.
 * @throws InputError when `dir` is not a folder, or holds neither a job's result.json nor a
 *   trial folder.
 */
export async function readJob(dir: string): Promise<JobRecord> {
  const root = resolve(dir);
  const notAJob = (why: string) =>
    new InputError(
      { file: dir },
      `not a job folder (${why}); give a folder berth run wrote, <jobs-dir>/<job-name>`,
    );
  const entries = await readdir(root, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    throw notAJob(
      error.code === 'ENOENT'
        ? 'it does not exist'
        : error.code === 'ENOTDIR'
          ? 'it is a file'
          : error.message,
    );
  });
  const warnings: string[] = [];
  const readState = async (file: string): Promise<Json | undefined> => {
    const stat = await statInside(root, file);
    if (!stat) return undefined;
    const value = await readJsonInside(root, file, MAX_STATE_BYTES);
    if (!isObject(value)) {
      warnings.push(`${file} could not be read as a JSON object`);
      return undefined;
    }
    return value;
  };
  const [config, jobResult, eventsFile] = await Promise.all([
    readState('config.json'),
    readState('result.json'),
    readInside(root, 'events.jsonl', MAX_EVENTS_BYTES),
  ]);
  const events = eventsFile ? readEventLines(eventsFile.text) : undefined;
  const finishedAt = str(jobResult?.finished_at);
  const held = await lockHeld(root);
  // A job runs while its lock is held; a crashed job leaves neither a finish time nor a live lock.
  const running = finishedAt === null && held;

  // Job-level rows: the multilingual run's categories, berth's attempts (under `berth` since
  // berth's job files are Harbor's models, at the top level before).
  const jobBerth = isObject(jobResult?.berth) ? jobResult.berth : jobResult;
  const configBerth = isObject(config?.berth) ? config.berth : config;
  const rows = new Map<string, Json>();
  if (Array.isArray(jobBerth?.trials))
    for (const row of jobBerth.trials)
      if (isObject(row)) {
        const key = str(row.trial_name) ?? str(row.instance_id);
        if (key) rows.set(key, row);
      }

  const folders = entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'));
  const read = await Promise.all(
    folders.map(async (entry): Promise<TrialRecord | undefined> => {
      const name = entry.name;
      const result = await readJsonInside(root, `${name}/result.json`, MAX_STATE_BYTES);
      if (isObject(result)) {
        const needsReport = verdictsInReport(result);
        const report = needsReport
          ? await readJsonInside(root, `${name}/verifier/report.json`, MAX_STATE_BYTES)
          : undefined;
        const task = str(result.task_name);
        const jobRow = rows.get(name) ?? (task ? rows.get(task) : undefined);
        const outputTail = wantsOutputTail(result) ? await testOutputTail(join(root, name)) : null;
        return trialRecordFromResult(result, {
          fallbackName: name,
          outputTail,
          ...(report !== undefined ? { report } : {}),
          ...(jobRow ? { jobRow } : {}),
        });
      }
      if ((await statInside(root, `${name}/result.json`)) !== undefined)
        warnings.push(`${name}/result.json could not be read as a JSON object`);
      const trialConfig = await readJsonInside(root, `${name}/config.json`, MAX_STATE_BYTES);
      if (!isObject(trialConfig)) return undefined;
      const live = running && (events ? events.running.has(name) : true);
      return unfinishedTrial(name, trialConfig, live, events?.running.get(name) ?? null);
    }),
  );
  const trials = read.filter((trial): trial is TrialRecord => trial !== undefined);
  if (!jobResult && !config && trials.length === 0)
    throw notAJob('no result.json, config.json or trial folder with a result');

  // Planned trials not started yet (berth records the plan in config.json).
  const plannedNames = configBerth?.trials ?? config?.berth_trials;
  const planned = Array.isArray(plannedNames) ? plannedNames.filter((n) => typeof n === 'string') : [];
  const seen = new Set(trials.map((trial) => trial.name));
  if (running)
    for (const name of planned as string[])
      if (!seen.has(name)) {
        const trial = unfinishedTrial(name, { task_name: name.replace(/__\d+$/, '') }, false, null);
        trials.push({ ...trial, outcome: 'pending', status: 'pending', why: 'not started' });
      }
  trials.sort(
    (a, b) => a.task.localeCompare(b.task) || a.attempt - b.attempt || a.name.localeCompare(b.name),
  );

  const writer = jobResult?.stats
    ? isObject(jobResult) && ('berth_version' in jobResult || isObject(jobResult.berth))
      ? 'berth'
      : 'harbor'
    : jobResult && ('by_task_type' in jobResult || (isObject(jobBerth) && 'by_task_type' in jobBerth))
      ? 'berth-multilingual'
      : trials.length > 0
        ? 'harbor'
        : 'unknown';
  // Harbor's JobConfig names its agents in `agents[]` (an earlier berth: `agent`).
  const configAgents = Array.isArray(config?.agents) ? config.agents.filter(isObject) : [];
  const configAgent = isObject(config?.agent)
    ? config.agent
    : configAgents.length === 1
      ? (configAgents[0] as Json)
      : {};
  const first = trials.find((trial) => trial.outcome !== 'pending');
  const agents = [...new Set(trials.filter((t) => t.agent !== 'unknown').map((t) => t.agent))];
  const models = [...new Set(trials.map((t) => t.model).filter((m): m is string => m !== null))];
  const datasets = [...new Set(trials.map((t) => t.dataset).filter((d): d is string => d !== null))];
  return {
    name: basename(root),
    dir: root,
    writer,
    dataset:
      str(configBerth?.source) ??
      str(config?.source) ??
      (datasets.length === 1 ? (datasets[0] as string) : null),
    agent:
      str(configAgent.name) ??
      str(jobResult?.agent) ??
      (agents.length > 0 ? agents.join(', ') : (first?.agent ?? null)),
    model: str(configAgent.model_name) ?? (models.length > 0 ? models.join(', ') : null),
    started_at: str(jobResult?.started_at) ?? earliest(trials.map((t) => t.started_at)),
    finished_at: finishedAt ?? (running ? null : latest(trials.map((t) => t.finished_at))),
    updated_at: str(jobResult?.updated_at),
    running,
    n_planned: Math.max(
      typeof jobResult?.n_total_trials === 'number' ? jobResult.n_total_trials : 0,
      planned.length,
      trials.length,
    ),
    trials,
    has_events: eventsFile !== undefined,
    warnings,
  };
}

function earliest(times: Array<string | null>): string | null {
  const sorted = times.filter((t): t is string => t !== null).sort();
  return sorted[0] ?? null;
}

function latest(times: Array<string | null>): string | null {
  const sorted = times.filter((t): t is string => t !== null).sort();
  return sorted[sorted.length - 1] ?? null;
}

/**
 * The job folders directly inside `jobsDir` (folders holding a result.json or config.json),
 * newest first by name.
 */
export async function listJobDirs(jobsDir: string): Promise<string[]> {
  const root = resolve(jobsDir);
  const entries = await readdir(root, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    throw new InputError({ file: jobsDir }, error.code === 'ENOENT' ? 'no such folder' : error.message);
  });
  const jobs: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const hasState =
      (await statInside(root, `${entry.name}/result.json`)) ??
      (await statInside(root, `${entry.name}/config.json`));
    if (hasState?.isFile) jobs.push(entry.name);
  }
  return jobs.sort().reverse();
}
