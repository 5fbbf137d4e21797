/**
 * A trial as plain data: everything a process needs to run one trial, and nothing live (no
 * agent, provider or verifier objects, no reads of `process.env` at run time). A `TrialSpec`
 * survives `JSON.stringify` / `JSON.parse` unchanged and runs in another process (`berth trial
 * SPEC.json`) or on another machine (a BullMQ worker, issue 16) with the same result.
 *
 * What a spec needs from the file system of the machine that made it is named in it and
 * nowhere else: the task's host folders (`TaskRef.load`: a Harbor task's `tests/`,
 * `environment/`, `solution/`; a dataset path), a predictions file (`agent.options`), git
 * mirrors (`environment.reposDir`). A worker with no shared file system gets those by content
 * hash (a `TaskRef.load` kind to add; `TaskRef.checksum` already names the content).
 *
 * Where the trial writes (its folder) and how it is stopped (an AbortSignal) are not part of
 * the spec: they belong to the process that runs it (`runTrial(spec, emit, { trialDir, signal })`).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { AgentOptions } from '../agents/registry.ts';
import { InputError } from '../errors.ts';
import type { LimitRequest } from '../sandbox/limits.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import type { Task } from '../tasks/task.ts';

/** Version of the `TrialSpec` shape; bumped on any change a reader must know about. */
export const TRIAL_SPEC_VERSION = 1;

/**
 * Which task a trial runs and how a process gets it.
 * - `inline`: the task as a loader made it (a `Task` is plain data). Host paths inside it
 *   (Harbor's `testsDir`, `dockerfileDir`, `solution.dir`) must exist where the spec runs.
 * - `dataset`: load the dataset at `path` with berth's loaders and take the task called `name`
 *   (for a spec written by hand, or run where the dataset is but the submitter's objects are not).
 *
 * Either way the loaded task's `taskChecksum` must equal `checksum`, or the trial is refused:
 * a spec never silently runs another version of its task.
 */
export interface TaskRef {
  /** The task's name in its dataset (SWE-bench `instance_id`, Harbor task folder name). */
  name: string;
  /** The format its loader gave (`swebench`, `harbor`, `multilingual`, ...). */
  format: string;
  /** sha256 hex of the task's definition (`taskChecksum`, src/tasks/checksum.ts). */
  checksum: string;
  load: { kind: 'inline'; task: Task } | { kind: 'dataset'; path: string };
}

/** The agent, by registry name, with the options its factory takes (src/agents/registry.ts). */
export interface AgentSpec {
  /** Registry name: `oracle`, `nop`, `predictions`, `command`, ... */
  name: string;
  /**
   * Plain-data options of the agent's factory (`AgentOptions`). Values here travel with the
   * spec (into files and, with workers, over Redis): model API keys never go here, the model
   * gateway reads them where it runs (issue 13); `--agent-env` values do, as the user gave them.
   */
  options: AgentOptions;
}

/**
 * Options of the environment providers, as data (the command line's `--repos`, `--image-map`,
 * `--rebuild`, `--keep-environments`...). Each provider reads the members it knows.
 */
export interface EnvironmentOptions {
  /** Folder of git mirrors for SWE-bench rows without a snapshot (local). */
  reposDir?: string;
  /** Parent of the local environment's temporary folders (default the OS temp folder). */
  tmpRoot?: string;
  /** Local isolation: `auto` (default), `off`, or a method name (`bwrap`, `unshare`, `unshare-user`). */
  isolation?: 'auto' | 'off' | 'bwrap' | 'unshare' | 'unshare-user';
  /** Keep environments after the trial, for debugging (`--keep-environments`). */
  keep?: boolean;
  /** Image map `FROM -> TO` (`--image-map`, the config file's `[docker] image_map`; key `*` maps the rest). */
  imageMap?: Record<string, string>;
  /** Rebuild images even when cached (`--rebuild`). */
  rebuild?: boolean;
  /** Image of the egress proxy for allowlist phases (Docker); default the base image. */
  egressImage?: string;
  /** Folder of tasks' image archives (`--images-dir`; the multilingual demo's `tar_path`); default `<dataset>/sample_images`. */
  imagesDir?: string;
}

/**
 * Resource limits of every untrusted command (agent set-up, agent, tests), local and Docker, as
 * the command line asks for them (`--override-cpus`, `--override-memory-mb`,
 * `--override-storage-mb`, `docker.pids_limit`): each replaces the task's value. Absent members
 * take the task's value, else berth's documented defaults (src/sandbox/limits.ts, docs/security.md).
 */
export type TrialLimits = LimitRequest;

/**
 * Timeouts: the task's own limits (task.toml, the row) times these multipliers (Harbor's
 * `--timeout-multiplier` and its per-phase `--<phase>-timeout-multiplier`). A per-phase
 * multiplier replaces `multiplier` for its phase.
 */
export interface TrialTimeouts {
  /** Multiplies every phase timeout (default 1). */
  multiplier: number;
  agentMultiplier?: number;
  verifierMultiplier?: number;
  agentSetupMultiplier?: number;
  environmentBuildMultiplier?: number;
  /** Replaces the task's agent timeout, in seconds before multipliers (`--agent-timeout`). */
  agentTimeoutSec?: number;
}

/** How the trial is verified, beyond what the task says. */
export interface VerificationOptions {
  /** Verify an empty patch too (dataset validation); by default it ends as `empty_patch`. */
  verifyEmptyPatch?: boolean;
  /**
   * Grading rules (`--rules`): absent is berth's default; `swebench` reproduces the SWE-bench
   * harness's verdict exactly (findings still recorded); `harbor` verifies a Harbor task in the
   * agent's environment as Harbor does: the agent's processes are not killed and a change it made
   * outside the work folder does not move the verifier to a fresh environment (recorded as a
   * finding that refuses nothing). See src/trials/verifier-environment.ts.
   */
  rules?: string;
  /**
   * Skip the verifier (Harbor's `--disable-verification`): the trial records no reward and no
   * verdict (status `unverified`).
   */
  disable?: boolean;
  /**
   * Variables for the verifier (Harbor's `--ve/--verifier-env K=V`), over the task's `[verifier]`
   * env and its steps' (Harbor's merge order).
   */
  env?: Record<string, string>;
}

/**
 * A path collected from the environment after the agent (Harbor's job-level `--artifact` /
 * `artifacts`), beside the task's own: a path, or `{source, destination, exclude}`.
 */
export type ArtifactRequest = string | { source: string; destination?: string | null; exclude?: string[] };

/** One trial, as data. */
export interface TrialSpec {
  /** `TRIAL_SPEC_VERSION` of the writer. */
  specVersion: typeof TRIAL_SPEC_VERSION;
  job: {
    /** The job's id (a UUID, Harbor's `JobResult.id`). */
    id: string;
    /** The job's name: its folder under the jobs folder. */
    name: string;
    /** The dataset's name, recorded as each trial's `source`. */
    source: string;
  };
  trial: {
    /** Folder name under the job (`<task>__<attempt>`). */
    name: string;
    /** 1-based attempt (`-k`). */
    attempt: number;
  };
  task: TaskRef;
  agent: AgentSpec;
  environment: EnvironmentOptions;
  limits: TrialLimits;
  timeouts: TrialTimeouts;
  verification: VerificationOptions;
  /** Artifacts the job collects from every trial (`--artifact`), after the task's own. */
  artifacts?: ArtifactRequest[];
  /**
   * Consent to `${SECRET}`-like templates in a Harbor task's `[verifier] env` / `[solution] env`
   * (`--allow-env-secrets`); the values are read where the trial runs.
   */
  allowEnvSecrets?: boolean;
  /** The job's resolved configuration (the command line's options), recorded in the trial's `config.json`. */
  config: Record<string, unknown>;
}

/**
 * The idempotency key of a trial (issue 16: a duplicate completion is dropped): sha256 hex of
 * the job id, the task's checksum, the attempt, the agent and the options that change a verdict.
 */
export function trialKey(spec: TrialSpec): string {
  return createHash('sha256')
    .update(
      canonicalJson([
        spec.job.id,
        spec.trial.name,
        spec.task.checksum,
        spec.trial.attempt,
        spec.agent,
        spec.limits,
        spec.timeouts,
        spec.verification,
      ]),
      'utf8',
    )
    .digest('hex');
}

/** JSON with object keys sorted at every level, so equal data gives equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

const positive = z.number().positive();
/** A job or trial name is a folder name: never a path, never `.` or `..`. */
const folderName = z
  .string()
  .regex(/^[A-Za-z0-9._-]+$/, 'only letters, digits, `.`, `_` and `-` (a folder name)')
  .refine((name) => name !== '.' && name !== '..', 'not `.` or `..`');
const specSchema = z.object({
  specVersion: z.literal(TRIAL_SPEC_VERSION),
  job: z.object({ id: z.string().min(1), name: folderName, source: z.string() }),
  trial: z.object({ name: folderName, attempt: z.number().int().min(1) }),
  task: z.object({
    name: z.string().min(1),
    format: z.string().min(1),
    checksum: z.string().regex(/^[0-9a-f]{64}$/),
    load: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('inline'), task: z.looseObject({ name: z.string(), format: z.string() }) }),
      z.object({ kind: z.literal('dataset'), path: z.string().min(1) }),
    ]),
  }),
  agent: z.object({ name: z.string().min(1), options: z.record(z.string(), z.unknown()) }),
  environment: z.looseObject({
    reposDir: z.string().optional(),
    tmpRoot: z.string().optional(),
    isolation: z.enum(['auto', 'off', 'bwrap', 'unshare', 'unshare-user']).optional(),
    keep: z.boolean().optional(),
    imageMap: z.record(z.string(), z.string()).optional(),
    rebuild: z.boolean().optional(),
    egressImage: z.string().optional(),
    imagesDir: z.string().optional(),
  }),
  limits: z.looseObject({
    processes: positive.optional(),
    memoryBytes: positive.optional(),
    fileSizeBytes: positive.optional(),
    cpuSec: positive.optional(),
    writableBytes: positive.optional(),
    outputBytes: positive.optional(),
  }),
  timeouts: z.object({
    multiplier: positive,
    agentMultiplier: positive.optional(),
    verifierMultiplier: positive.optional(),
    agentSetupMultiplier: positive.optional(),
    environmentBuildMultiplier: positive.optional(),
    agentTimeoutSec: positive.optional(),
  }),
  verification: z.looseObject({
    verifyEmptyPatch: z.boolean().optional(),
    rules: z.string().optional(),
    disable: z.boolean().optional(),
    env: z.record(z.string(), z.string()).optional(),
  }),
  artifacts: z
    .array(
      z.union([
        z.string().min(1),
        z.object({
          source: z.string().min(1),
          destination: z.string().nullable().optional(),
          exclude: z.array(z.string()).optional(),
        }),
      ]),
    )
    .optional(),
  allowEnvSecrets: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()),
});

/**
 * Reads a trial spec from JSON text (a file given to `berth trial`, a message from the queue).
 * @param file where the text came from, for messages.
 * @throws InputError naming the file and the first bad field.
 */
export function parseTrialSpec(text: string, file: string): TrialSpec {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError({ file }, `not valid JSON: ${(error as Error).message}`);
  }
  const parsed = specSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || undefined;
    throw new InputError({ file, ...(field ? { field } : {}) }, `not a trial spec: ${issue?.message}`);
  }
  return value as TrialSpec;
}

/**
 * The task a spec names, checked against its checksum.
 * @throws InputError when the dataset has no such task or the task's content differs from
 *   what the spec was made from (its checksum).
 */
export async function loadTaskRef(ref: TaskRef, file = 'trial spec'): Promise<Task> {
  let task: Task | undefined;
  if (ref.load.kind === 'inline') task = ref.load.task;
  else {
    const { loadTasks } = await import('../tasks/registry.ts');
    task = (await loadTasks(ref.load.path)).tasks.find((t) => t.name === ref.name);
    if (!task)
      throw new InputError(
        { file, field: 'task.name' },
        `${ref.load.path} has no task ${JSON.stringify(ref.name)}`,
      );
  }
  const checksum = taskChecksum(task);
  if (task.name !== ref.name || checksum !== ref.checksum)
    throw new InputError(
      { file, field: 'task.checksum' },
      `task ${ref.name} is not the one the spec was made from (checksum ${checksum.slice(0, 12)}, spec ${ref.checksum.slice(0, 12)})`,
    );
  return task;
}

/** What a spec is made from: the job's settings and one planned trial. */
export interface TrialSpecParts {
  job: TrialSpec['job'];
  trialName: string;
  attempt: number;
  task: Task;
  agent: AgentSpec;
  environment?: EnvironmentOptions;
  limits?: TrialLimits;
  timeouts?: Partial<TrialTimeouts>;
  verification?: VerificationOptions;
  artifacts?: ArtifactRequest[];
  allowEnvSecrets?: boolean;
  config?: Record<string, unknown>;
}

/** A spec's timeouts from Harbor's multipliers: every phase's, and the agent's / verifier's own. */
export function trialTimeouts(
  multiplier: number | undefined,
  phase: { agent?: number; verifier?: number } | undefined,
): TrialTimeouts {
  return {
    multiplier: multiplier ?? 1,
    ...(phase?.agent !== undefined ? { agentMultiplier: phase.agent } : {}),
    ...(phase?.verifier !== undefined ? { verifierMultiplier: phase.verifier } : {}),
  };
}

/** The spec of one trial, its task inline. */
export function makeTrialSpec(parts: TrialSpecParts): TrialSpec {
  const { task } = parts;
  return {
    specVersion: TRIAL_SPEC_VERSION,
    job: parts.job,
    trial: { name: parts.trialName, attempt: parts.attempt },
    task: {
      name: task.name,
      format: task.format,
      checksum: taskChecksum(task),
      load: { kind: 'inline', task },
    },
    agent: parts.agent,
    environment: parts.environment ?? {},
    limits: parts.limits ?? {},
    timeouts: { ...parts.timeouts, multiplier: parts.timeouts?.multiplier ?? 1 },
    verification: parts.verification ?? {},
    ...(parts.artifacts?.length ? { artifacts: parts.artifacts } : {}),
    ...(parts.allowEnvSecrets ? { allowEnvSecrets: true } : {}),
    config: parts.config ?? {},
  };
}
