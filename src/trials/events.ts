/**
 * What happens in a job, as one typed union of events. The job appends every event to
 * `jobs/<job>/events.jsonl` (and a trial's to `<trial>/events.jsonl`) as it happens, one JSON
 * object a line, so a crashed or killed run leaves a readable log up to its last event.
 * Reporters subscribe to them (src/reporters/reporter.ts), the viewer tails the file, the
 * model gateway emits `model-call` events through the `emit` it is given, and workers on other
 * machines send them back over Redis.
 *
 * Every event carries `v` (the schema version, `EVENTS_SCHEMA_VERSION`), `type` (a
 * `<noun>-<action>` name, as the AI SDK names its stream parts), `time` (ISO 8601 UTC), `job`
 * (the job's name) and, for everything inside a trial, `trial` (the trial's folder name).
 * Field names are snake_case, as in `result.json`. Units: seconds, bytes, US dollars.
 * The schema is in docs/events.md and, generated from the zod schemas below,
 * docs/events.schema.json. Readers ignore event types and fields they do not know.
 */
import { z } from 'zod';
import type { JobSummary } from '../jobs/job.ts';
import { EVENTS_SCHEMA_VERSION, eventTime } from './event-stamp.ts';
import { TRIAL_STATUSES, type TrialResult } from './result.ts';

export { EVENTS_SCHEMA_VERSION, eventTime };

/** The phases of a trial, in the order they run (per step for multi-step tasks). */
export const PHASES = [
  /** Start the environment (build or pull, create, the dataset's install step). */
  'environment',
  /** `[environment.healthcheck]` / a step's healthcheck. */
  'healthcheck',
  /** An installed agent's set-up (Harbor's `agent_setup`). */
  'agent-setup',
  /** A multi-step task's step preparation: its `workdir/` upload and `setup.sh`. */
  'step-setup',
  /** The agent acts (or hands back a patch). */
  'agent',
  /** Apply the agent's patch to the repository (SWE-bench rows, predictions). */
  'patch',
  /** Collect the task's artifacts. */
  'artifacts',
  /** Run the tests and grade (in the agent's environment or a separate one). */
  'verifier',
] as const;
export type Phase = (typeof PHASES)[number];

const time = z.string().describe('ISO 8601 UTC time the event happened');
const base = {
  v: z.literal(EVENTS_SCHEMA_VERSION).describe('schema version'),
  time,
  job: z.string().describe("the job's name (its folder)"),
};
const inTrial = { ...base, trial: z.string().describe("the trial's name (its folder under the job)") };
const step = z.string().optional().describe("a multi-step task's step name");
const seconds = z.number().nonnegative();
const rewards = z
  .record(z.string(), z.number())
  .nullable()
  .describe('metric -> value; `reward` is the main one');
const counts = z.object({ passed: z.number().int(), total: z.number().int() }).nullable();
const exception = z
  .object({ type: z.string().describe("Harbor's exception name where one exists"), message: z.string() })
  .nullable();
const status = z.enum(TRIAL_STATUSES);

export const jobStartEvent = z.object({
  type: z.literal('job-start'),
  ...base,
  job_id: z.string().describe("the job's id (a UUID)"),
  n_trials: z.number().int().describe('trials planned'),
  berth_version: z.string(),
});

export const jobEndEvent = z.object({
  type: z.literal('job-end'),
  ...base,
  duration_sec: seconds,
  n_trials: z.number().int().describe('trials planned'),
  n_finished: z.number().int().describe('trials with a result (run or kept from an earlier run)'),
  n_resolved: z.number().int(),
  n_errors: z.number().int().describe("trials with an exception (Harbor's n_errors)"),
  cancelled: z.boolean().describe('stopped before every trial finished'),
});

export const trialStartEvent = z.object({
  type: z.literal('trial-start'),
  ...inTrial,
  task: z.string().describe("the task's name"),
  attempt: z.number().int().min(1),
  agent: z.object({ name: z.string(), version: z.string(), model: z.string().nullable() }),
});

export const trialEndEvent = z.object({
  type: z.literal('trial-end'),
  ...inTrial,
  task: z.string(),
  attempt: z.number().int().min(1),
  status,
  resolved: z.boolean(),
  rewards,
  exception: exception.describe("the trial's exception_info, type and message"),
  duration_sec: seconds,
  reused: z.boolean().describe('kept from an earlier run of the job, not run again'),
});

export const phaseStartEvent = z.object({
  type: z.literal('phase-start'),
  ...inTrial,
  phase: z.enum(PHASES),
  step,
});

export const phaseEndEvent = z.object({
  type: z.literal('phase-end'),
  ...inTrial,
  phase: z.enum(PHASES),
  step,
  duration_sec: seconds,
  exception: exception.describe('why the phase failed, if it did'),
});

export const modelCallEvent = z.object({
  type: z.literal('model-call'),
  ...inTrial,
  step,
  provider: z.string().describe('e.g. openai, anthropic, openrouter'),
  model: z.string(),
  protocol: z
    .enum(['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini-generate-content'])
    .describe('the protocol the agent spoke'),
  input_tokens: z.number().int().nonnegative(),
  cached_tokens: z.number().int().nonnegative().describe('input tokens read from the cache'),
  output_tokens: z.number().int().nonnegative(),
  cost_usd: z.number().nonnegative().nullable().describe('null when unknown, never a guess'),
  duration_sec: seconds,
  error: z.string().nullable().optional().describe('why the call failed, if it did'),
});

export const toolCallEvent = z.object({
  type: z.literal('tool-call'),
  ...inTrial,
  step,
  name: z.string(),
  arguments: z.unknown().describe('the arguments as the model gave them'),
  output: z.string().describe('the output, truncated'),
  output_truncated: z.boolean(),
  duration_sec: seconds.optional(),
});

export const commandEvent = z.object({
  type: z.literal('command'),
  ...inTrial,
  step,
  phase: z.enum(PHASES).optional(),
  command: z.string().describe('the command line, truncated'),
  exit_code: z.number().int().nullable().describe('null when killed by a signal'),
  timed_out: z.boolean(),
  duration_sec: seconds,
});

export const messageEvent = z.object({
  type: z.literal('message'),
  ...inTrial,
  step,
  role: z.enum(['system', 'user', 'assistant']),
  text: z.string().describe('the text, truncated'),
});

export const verdictEvent = z.object({
  type: z.literal('verdict'),
  ...inTrial,
  step,
  status,
  rewards,
  FAIL_TO_PASS: counts,
  PASS_TO_PASS: counts,
  reason: z.string().nullable().describe('why not resolved, or a note'),
});

export const noticeEvent = z.object({
  type: z.literal('notice'),
  ...base,
  trial: z.string().optional(),
  level: z.enum(['info', 'warning', 'error']),
  message: z.string(),
});

/** The zod schema of every event. */
export const berthEventSchema = z.discriminatedUnion('type', [
  jobStartEvent,
  jobEndEvent,
  trialStartEvent,
  trialEndEvent,
  phaseStartEvent,
  phaseEndEvent,
  modelCallEvent,
  toolCallEvent,
  commandEvent,
  messageEvent,
  verdictEvent,
  noticeEvent,
]);

export type BerthEvent = z.infer<typeof berthEventSchema>;
export type BerthEventType = BerthEvent['type'];
/** The event of one `type`, e.g. `EventOf<'trial-end'>`. */
export type EventOf<T extends BerthEventType> = Extract<BerthEvent, { type: T }>;

/** Receives events. Must not throw and must not block: a slow consumer buffers on its side. */
export type Emit = (event: BerthEvent) => void;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event inside a trial without the fields its trial emitter fills in (`v`, `time`, `job`, `trial`). */
export type TrialEventInput = DistributiveOmit<
  Exclude<BerthEvent, { type: 'job-start' | 'job-end' }>,
  'v' | 'time' | 'job' | 'trial'
>;
/** What the engine gives a trial's parts (the agent, the gateway): they emit without knowing the job. */
export type TrialEmit = (event: TrialEventInput) => void;

/** A `TrialEmit` that stamps `v`, `time`, `job` and `trial` and hands the event to `emit`. */
export function trialEmitter(emit: Emit, job: string, trial: string): TrialEmit {
  return (event) => emit({ ...event, v: EVENTS_SCHEMA_VERSION, time: eventTime(), job, trial } as BerthEvent);
}

/**
 * Reads one line of an `events.jsonl`.
 * @returns the event, or undefined for a blank line, a line that is not JSON (a write cut by a
 *   kill), or an event of a type or version this berth does not know (readers skip those).
 */
export function parseEventLine(line: string): BerthEvent | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = berthEventSchema.safeParse(value);
  return parsed.success ? (value as BerthEvent) : undefined;
}

/** The JSON Schema of an event (docs/events.schema.json is this, written by a test). */
export function eventsJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(berthEventSchema, { target: 'draft-2020-12', io: 'input' });
  return schema as Record<string, unknown>;
}

/** The `trial-end` event of a finished trial's result. */
export function trialEndEventOf(result: TrialResult, job: string, reused = false): EventOf<'trial-end'> {
  const e = result.exception_info;
  return {
    type: 'trial-end',
    v: EVENTS_SCHEMA_VERSION,
    time: eventTime(),
    job,
    trial: result.trial_name,
    task: result.task_name,
    attempt: result.berth.attempt,
    status: result.berth.status,
    resolved: result.berth.resolved,
    rewards: result.verifier_result?.rewards ?? null,
    exception: e ? { type: e.exception_type, message: e.exception_message } : null,
    duration_sec: result.berth.duration_sec,
    reused,
  };
}

/** The `job-end` event of a finished job's summary. */
export function jobEndEventOf(summary: JobSummary): EventOf<'job-end'> {
  return {
    type: 'job-end',
    v: EVENTS_SCHEMA_VERSION,
    time: eventTime(),
    job: summary.job_name,
    duration_sec: summary.duration_sec,
    n_trials: summary.total,
    n_finished: summary.trials.length,
    n_resolved: summary.resolved,
    n_errors: summary.trials.filter((t) => t.exception_info !== null).length,
    cancelled: summary.cancelled,
  };
}

/** The `trial-start` event of a planned trial as it starts. */
export function trialStartEventOf(
  trial: { trialName: string; attempt: number; task: { name: string } },
  job: string,
  agent: { name: string; version: string; modelName?: string },
): EventOf<'trial-start'> {
  return {
    type: 'trial-start',
    v: EVENTS_SCHEMA_VERSION,
    time: eventTime(),
    job,
    trial: trial.trialName,
    task: trial.task.name,
    attempt: trial.attempt,
    agent: { name: agent.name, version: agent.version, model: agent.modelName ?? null },
  };
}
