/**
 * The run plan of a Harbor task that uses the features beyond a plain single
 * step (Harbor `src/harbor/trial/multi_step.py`, `models/task/verifier_mode.py`):
 *
 * - `[[steps]]`: each step's instruction (`steps/<name>/instruction.md`), tests
 *   (`steps/<name>/tests/` uploaded over the shared `tests/`), solution
 *   (`steps/<name>/solution/solve.sh`), `workdir/` (uploaded into the working
 *   directory; its `setup.sh` runs before the agent), `min_reward`, healthcheck,
 *   artifacts and `[steps.agent]` / `[steps.verifier]` overrides;
 * - the verifier mode per step: an explicit `environment_mode` wins, a
 *   `[verifier.environment]` implies `separate`, otherwise the task's mode
 *   (default `shared`); a separate verifier's image is built from the step's
 *   `tests/` when it exists, else the task's `tests/`, and its settings come from
 *   the step's `[verifier.environment]`, the task's, or a copy of `[environment]`;
 * - `[agent] user`, `[verifier] user`, `[environment.healthcheck]`, `artifacts`,
 *   `[verifier] env` / `[solution] env` (templated from the host, see env-template.ts);
 * - a Kotlin Benchmark task (its `tests/expected_tests.json`) graded by berth.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, type InputIssue } from '../../errors.ts';
import type { NetworkPolicy, Task } from '../task.ts';
import { stripCanary } from './canary.ts';
import { tomlKeyLines } from './toml-lines.ts';

/** `[environment.healthcheck]` (Harbor's HealthcheckConfig). Units: seconds. */
export interface HealthcheckSpec {
  command: string;
  intervalSec: number;
  timeoutSec: number;
  startPeriodSec: number;
  startIntervalSec: number;
  retries: number;
}

/** One artifact: a path in the environment and where it lands under `<trial>/artifacts/`. */
export interface ArtifactSpec {
  source: string;
  destination?: string;
  exclude?: string[];
}

/** Settings of a separate verifier container. */
export interface VerifierEnvironmentSpec {
  /** Build context (holds the Dockerfile): the step's `tests/` or the task's. */
  contextDir: string;
  network: NetworkPolicy;
  cpus?: number;
  memoryMb?: number;
  buildTimeoutSec?: number;
  dockerImage?: string;
  workdir?: string;
  storageMb?: number;
  gpus?: number;
  /** `[verifier.environment] env`, as written (templates resolved at start). */
  env?: Record<string, string>;
}

export interface HarborStepPlan {
  /** The step name; null for a single-step task. */
  name: string | null;
  instruction: string;
  /** Folder holding solve.sh, when there is one. */
  solutionDir?: string;
  /** Folders uploaded to /tests in order (shared first, the step's over it). */
  testsDirs: string[];
  /** `steps/<name>/workdir/` when present. */
  workdirDir?: string;
  agentTimeoutSec?: number;
  agentUser?: string | number;
  verifierTimeoutSec: number;
  verifierUser?: string | number;
  /** Raw `[verifier] env` merged with the step's (templates not yet resolved). */
  verifierEnv: Record<string, string>;
  verifierMode: 'shared' | 'separate';
  /** Set when `verifierMode` is `separate`. */
  verifierEnvironment?: VerifierEnvironmentSpec;
  /** Threshold on `reward`, or per key; a missing key counts as -infinity. */
  minReward?: number | Record<string, number>;
  healthcheck?: HealthcheckSpec;
  /** The task's artifacts followed by the step's. */
  artifacts: ArtifactSpec[];
  /** `expected_tests.json` in this step's tests, when berth grades it (Kotlin Benchmark). */
  kotlinExpected?: string;
  /** `[steps.agent] network_mode` / `[steps.verifier] network_mode`: this step's phase networks. */
  phaseNetwork?: { agent?: NetworkPolicy; verifier?: NetworkPolicy };
}

export interface HarborPlan {
  taskDir: string;
  multiStep: boolean;
  strategy: 'mean' | 'final';
  /** `[environment.healthcheck]`: runs after the environment starts, before any agent. */
  healthcheck?: HealthcheckSpec;
  solutionEnv: Record<string, string>;
  steps: HarborStepPlan[];
}

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const user = (v: unknown): string | number | undefined =>
  typeof v === 'string' || typeof v === 'number' ? v : undefined;
const strRecord = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x;
  return out;
};

/** Parses a healthcheck table with Harbor's defaults (interval 5, timeout 30, start period 0, start interval 5, retries 3). */
export function parseHealthcheck(raw: unknown): HealthcheckSpec | undefined {
  const h = obj(raw);
  if (typeof h.command !== 'string') return undefined;
  return {
    command: h.command,
    intervalSec: num(h.interval_sec) ?? 5,
    timeoutSec: num(h.timeout_sec) ?? 30,
    startPeriodSec: num(h.start_period_sec) ?? 0,
    startIntervalSec: num(h.start_interval_sec) ?? 5,
    retries: num(h.retries) ?? 3,
  };
}

/** Normalises `artifacts` entries (a path, or `{source, destination?, exclude?}`). */
export function parseArtifacts(raw: unknown): ArtifactSpec[] {
  if (!Array.isArray(raw)) return [];
  const out: ArtifactSpec[] = [];
  for (const a of raw) {
    if (typeof a === 'string') out.push({ source: a });
    else {
      const o = obj(a);
      if (typeof o.source !== 'string') continue;
      out.push({
        source: o.source,
        ...(typeof o.destination === 'string' ? { destination: o.destination } : {}),
        ...(Array.isArray(o.exclude) ? { exclude: o.exclude.filter((x) => typeof x === 'string') } : {}),
      });
    }
  }
  return out;
}

function networkOf(env: Raw): NetworkPolicy {
  const mode = env.network_mode;
  if (mode === 'no-network') return { mode: 'no-network' };
  if (mode === 'allowlist')
    return {
      mode: 'allowlist',
      allowedHosts: Array.isArray(env.allowed_hosts) ? (env.allowed_hosts as string[]) : [],
    };
  if (mode === 'public') return { mode: 'public' };
  if (env.allow_internet === false) return { mode: 'no-network' };
  return { mode: 'public' };
}

function verifierModeOf(v: Raw): 'shared' | 'separate' | undefined {
  if (v.environment_mode === 'shared' || v.environment_mode === 'separate') return v.environment_mode;
  if (v.environment !== undefined) return 'separate';
  return undefined;
}

function envSpec(env: Raw, contextDir: string): VerifierEnvironmentSpec {
  return {
    contextDir,
    network: networkOf(env),
    ...(num(env.cpus) !== undefined ? { cpus: num(env.cpus) } : {}),
    ...(num(env.memory_mb) !== undefined ? { memoryMb: num(env.memory_mb) } : {}),
    ...(num(env.build_timeout_sec) !== undefined ? { buildTimeoutSec: num(env.build_timeout_sec) } : {}),
    ...(typeof env.docker_image === 'string' ? { dockerImage: env.docker_image } : {}),
    ...(typeof env.workdir === 'string' ? { workdir: env.workdir } : {}),
    ...(num(env.storage_mb) !== undefined ? { storageMb: num(env.storage_mb) } : {}),
    ...(num(env.gpus) !== undefined ? { gpus: num(env.gpus) } : {}),
    ...(Object.keys(strRecord(env.env)).length > 0 ? { env: strRecord(env.env) } : {}),
  };
}

/** The Harbor task folder and raw task.toml a loaded task carries, or undefined for other formats. */
function harborRaw(task: Task): { dir: string; toml: Raw } | undefined {
  if (task.format !== 'harbor') return undefined;
  const dir = (task.metadata.harbor as { task_dir?: string } | undefined)?.task_dir;
  if (!dir) return undefined;
  return { dir, toml: obj(task.metadata.task_toml) };
}

/**
 * True when a Harbor task needs a plan of its own (src/trials/plan.ts):
 * steps, a separate verifier, an agent user, a healthcheck, artifacts,
 * templated verifier/solution env, or a Kotlin Benchmark `expected_tests.json`.
 */
export function needsExtendedTrial(task: Task): boolean {
  const h = harborRaw(task);
  if (!h) return false;
  const t = h.toml;
  const env = obj(t.environment);
  const verifier = obj(t.verifier);
  const hasTemplate = (r: Record<string, string>) => Object.values(r).some((v) => v.includes('$'));
  return (
    (Array.isArray(t.steps) && t.steps.length > 0) ||
    verifierModeOf(verifier) === 'separate' ||
    user(obj(t.agent).user) !== undefined ||
    env.healthcheck !== undefined ||
    parseArtifacts(t.artifacts).length > 0 ||
    hasTemplate(strRecord(verifier.env)) ||
    hasTemplate(strRecord(obj(t.solution).env)) ||
    existsSync(join(h.dir, 'tests', 'expected_tests.json'))
  );
}

/**
 * Builds the run plan of a Harbor task (`loadHarborTask` builds it once to check a multi-step task up front).
 * @throws InputError listing every problem of every step, each naming task.toml, the line of the
 *   step's key (else of its `[[steps]]` header) and the key (`steps[1].name`): a step folder, its
 *   instruction or its test script missing, or a step combining `environment_mode = "shared"` with
 *   `[steps.verifier.environment]`
 */
export function harborPlan(task: Task): HarborPlan {
  const h = harborRaw(task);
  if (!h) throw new Error(`task ${task.name} is not a Harbor task folder`);
  const { dir, toml: t } = h;
  const file = join(dir, 'task.toml');
  const env = obj(t.environment);
  const agent = obj(t.agent);
  const verifier = obj(t.verifier);
  const taskMode = verifierModeOf(verifier) ?? 'shared';
  const taskArtifacts = parseArtifacts(t.artifacts);
  const sharedTests = join(dir, 'tests');
  const hasShared = existsSync(sharedTests);
  const expectedIn = (dirs: string[]) =>
    [...dirs]
      .reverse()
      .map((d) => join(d, 'expected_tests.json'))
      .find((f) => existsSync(f));

  const separateEnv = (step: Raw | undefined, contextDir: string): VerifierEnvironmentSpec => {
    const stepEnv = step ? obj(step.verifier).environment : undefined;
    if (stepEnv !== undefined) return envSpec(obj(stepEnv), contextDir);
    if (verifier.environment !== undefined) return envSpec(obj(verifier.environment), contextDir);
    // Harbor: a deep copy of [environment], built from tests/ (docker_image dropped: the tests/ Dockerfile is the image).
    const { docker_image: _ignored, ...rest } = env;
    return envSpec(rest, contextDir);
  };

  const base = {
    agentTimeoutSec: num(agent.timeout_sec),
    agentUser: user(agent.user),
    verifierTimeoutSec: num(verifier.timeout_sec) ?? 600,
    verifierUser: user(verifier.user),
  };
  const rawSteps = Array.isArray(t.steps) ? (t.steps as unknown[]).map(obj) : [];
  const steps: HarborStepPlan[] = [];
  if (rawSteps.length === 0) {
    const verifierEnvironment = taskMode === 'separate' ? separateEnv(undefined, sharedTests) : undefined;
    steps.push({
      name: null,
      instruction: task.instruction,
      ...(task.solution.kind === 'script' ? { solutionDir: task.solution.dir } : {}),
      testsDirs: [sharedTests],
      ...base,
      verifierEnv: strRecord(verifier.env),
      verifierMode: taskMode,
      ...(verifierEnvironment ? { verifierEnvironment } : {}),
      artifacts: taskArtifacts,
      ...(expectedIn([sharedTests]) ? { kotlinExpected: expectedIn([sharedTests]) } : {}),
    });
  }
  // Every problem of every step is collected, each on its `[[steps]]` table's line, then thrown together.
  const issues: InputIssue[] = [];
  let lineOf: ((path: ReadonlyArray<string | number>) => number | undefined) | undefined;
  const issueAt = (i: number, field: string, message: string): InputIssue => {
    lineOf ??= existsSync(file) ? tomlKeyLines(readFileSync(file, 'utf8')) : () => undefined;
    const path = [...field.split('.')];
    // The key's own line, else its step's `[[steps]]` header.
    const line = lineOf(['steps', i, ...path]) ?? lineOf(['steps', i]);
    return { file, ...(line !== undefined ? { line } : {}), field: `steps[${i}].${field}`, message };
  };
  rawSteps.forEach((s, i) => {
    const name = String(s.name);
    const stepDir = join(dir, 'steps', name);
    if (!existsSync(stepDir)) {
      issues.push(issueAt(i, 'name', `no folder steps/${name}/ for this step`));
      return;
    }
    const instructionFile = join(stepDir, 'instruction.md');
    const hasInstruction = existsSync(instructionFile);
    if (!hasInstruction) issues.push(issueAt(i, 'name', `missing steps/${name}/instruction.md`));
    const stepTests = join(stepDir, 'tests');
    const testsDirs = [...(hasShared ? [sharedTests] : []), ...(existsSync(stepTests) ? [stepTests] : [])];
    const sAgent = obj(s.agent);
    const sVerifier = obj(s.verifier);
    if (sVerifier.environment_mode === 'shared' && sVerifier.environment !== undefined)
      issues.push(
        issueAt(
          i,
          'verifier.environment_mode',
          '`environment_mode = "shared"` cannot be combined with [steps.verifier.environment]',
        ),
      );
    const mode = verifierModeOf(sVerifier) ?? taskMode;
    const contextDir = existsSync(stepTests) ? stepTests : sharedTests;
    if (mode === 'shared' && !testsDirs.some((d) => existsSync(join(d, 'test.sh'))))
      issues.push(
        issueAt(i, 'name', `step ${name} has no test script (steps/${name}/tests/test.sh or tests/test.sh)`),
      );
    if (issues.length > 0) return;
    const solutionDir = join(stepDir, 'solution');
    const workdirDir = join(stepDir, 'workdir');
    const healthcheck = parseHealthcheck(s.healthcheck);
    const minReward = s.min_reward as number | Record<string, number> | undefined;
    const agentTimeoutSec = num(sAgent.timeout_sec) ?? base.agentTimeoutSec;
    const agentUser = user(sAgent.user) ?? base.agentUser;
    const verifierUser = user(sVerifier.user) ?? base.verifierUser;
    const kotlinExpected = expectedIn(testsDirs);
    const phaseNetwork = {
      ...(sAgent.network_mode !== undefined ? { agent: networkOf(sAgent) } : {}),
      ...(sVerifier.network_mode !== undefined ? { verifier: networkOf(sVerifier) } : {}),
    };
    steps.push({
      name,
      instruction: hasInstruction ? stripCanary(readFileSync(instructionFile, 'utf8')) : '',
      ...(existsSync(join(solutionDir, 'solve.sh')) ? { solutionDir } : {}),
      testsDirs,
      ...(existsSync(workdirDir) ? { workdirDir } : {}),
      ...(agentTimeoutSec !== undefined ? { agentTimeoutSec } : {}),
      ...(agentUser !== undefined ? { agentUser } : {}),
      verifierTimeoutSec: num(sVerifier.timeout_sec) ?? base.verifierTimeoutSec,
      ...(verifierUser !== undefined ? { verifierUser } : {}),
      verifierEnv: { ...strRecord(verifier.env), ...strRecord(sVerifier.env) },
      verifierMode: mode,
      ...(mode === 'separate' ? { verifierEnvironment: separateEnv(s, contextDir) } : {}),
      ...(minReward !== undefined ? { minReward } : {}),
      ...(healthcheck ? { healthcheck } : {}),
      artifacts: [...taskArtifacts, ...parseArtifacts(s.artifacts)],
      ...(kotlinExpected ? { kotlinExpected } : {}),
      ...(Object.keys(phaseNetwork).length > 0 ? { phaseNetwork } : {}),
    });
  });
  if (issues.length > 0) throw InputError.all(issues);
  const hc = parseHealthcheck(env.healthcheck);
  return {
    taskDir: dir,
    multiStep: rawSteps.length > 0,
    strategy: t.multi_step_reward_strategy === 'final' ? 'final' : 'mean',
    ...(hc ? { healthcheck: hc } : {}),
    solutionEnv: strRecord(obj(t.solution).env),
    steps,
  };
}

/** Harbor's `_min_reward_failure`: a message when `rewards` misses a threshold, else undefined. */
export function minRewardFailure(
  rewards: Record<string, number> | null | undefined,
  minReward: number | Record<string, number>,
): string | undefined {
  const thresholds = typeof minReward === 'number' ? { reward: minReward } : minReward;
  for (const [key, threshold] of Object.entries(thresholds)) {
    const actual = rewards?.[key] ?? Number.NEGATIVE_INFINITY;
    if (actual < threshold) return `${key}=${actual} below min_reward ${threshold}`;
  }
  return undefined;
}

/**
 * Harbor's multi-step reward: `final` takes the last step's rewards; `mean`
 * averages each key over the steps that have a verifier result (a key missing
 * from a step counts 0). Null when no step has one.
 */
export function aggregateStepRewards(
  strategy: 'mean' | 'final',
  steps: Array<{ verifier_result: { rewards: Record<string, number> } | null }>,
): Record<string, number> | null {
  if (steps.length === 0) return null;
  if (strategy === 'final') return steps[steps.length - 1]?.verifier_result?.rewards ?? null;
  const valid = steps.flatMap((s) => (s.verifier_result ? [s.verifier_result.rewards] : []));
  if (valid.length === 0) return null;
  const keys = new Set(valid.flatMap((r) => Object.keys(r)));
  if (keys.size === 0) return null;
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = valid.reduce((sum, r) => sum + (r[k] ?? 0), 0) / valid.length;
  return out;
}
