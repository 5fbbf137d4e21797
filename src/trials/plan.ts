/**
 * A trial's plan: the steps the engine runs, as data. A task without steps is a one-step plan;
 * a Harbor task with `[[steps]]`, a separate verifier environment, users, healthchecks,
 * artifacts, templated env or Kotlin Benchmark grading gets its steps from its task.toml
 * (src/tasks/harbor/steps.ts). The engine (engine.ts) runs every plan the same way: it never
 * asks which format or verifier a task has.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ArtifactSpec,
  type HealthcheckSpec,
  harborPlan,
  needsExtendedTrial,
  type VerifierEnvironmentSpec,
} from '../tasks/harbor/steps.ts';
import type { EnvironmentSpec, Task } from '../tasks/task.ts';

/** Verifier timeout in seconds when a task names none. */
export const DEFAULT_VERIFIER_TIMEOUT_SEC = 1800;

/** One step: prepare, run the agent, collect artifacts, verify. */
export interface StepPlan {
  /** The step's name; null for a task without steps. */
  name: string | null;
  /** The task as the agent sees it in this step (its instruction and solution). */
  agentTask: Task;
  /** Agent timeout in seconds, before multipliers; undefined for none. */
  agentTimeoutSec?: number;
  /** The user the agent's commands run as (Harbor's `[agent] user`). */
  agentUser?: string | number;
  /** `steps/<name>/workdir/`, uploaded into the working directory before the agent (its `setup.sh` runs). */
  workdirDir?: string;
  /** A healthcheck run before the agent of this step. */
  healthcheck?: HealthcheckSpec;
  /** The task whose per-phase networks apply in this step (the step's overrides merged in). */
  networkTask: Task;
  /** Artifacts to collect after the agent; undefined: the task has no artifacts phase. */
  artifacts?: ArtifactSpec[];
  verifier: {
    /** The task the verifier reads (its `verifier` spec for this step). */
    task: Task;
    /** Folders merged, later over earlier, into the tests folder the verifier uploads. */
    testsDirs?: string[];
    /** Timeout in seconds before multipliers. */
    timeoutSec: number;
    /** Templates in `env` resolved from the host when the trial starts. */
    envTemplates?: { env: Record<string, string>; section: string };
    /** A separate verifier environment (its own container) instead of the agent's. */
    separate?: { task: Task; key: string };
  };
  /** Later steps run only when this one's rewards reach it (per key, or `reward`). */
  minReward?: number | Record<string, number>;
}

export interface TrialPlan {
  /** True for a task with `[[steps]]`: results per step, rewards aggregated. */
  multiStep: boolean;
  /** How step rewards become the trial's (multi-step). */
  strategy: 'mean' | 'final';
  /** A healthcheck run once after the environment starts. */
  healthcheck?: HealthcheckSpec;
  /** `[solution] env` templates, resolved from the host when the trial starts. */
  solutionEnv: Record<string, string>;
  steps: StepPlan[];
}

/** The plan of a task. Reads a Harbor task's folder; pure otherwise. */
export function planTrial(task: Task): TrialPlan {
  if (!needsExtendedTrial(task)) return onePlan(task);
  const harbor = harborPlan(task);
  return {
    multiStep: harbor.multiStep,
    strategy: harbor.strategy,
    ...(harbor.healthcheck ? { healthcheck: harbor.healthcheck } : {}),
    solutionEnv: harbor.solutionEnv,
    steps: harbor.steps.map((step) => {
      const verifierSpec = {
        kind: 'harbor' as const,
        testsDir: step.testsDirs[0] ?? '',
        timeoutSec: step.verifierTimeoutSec,
        env: step.verifierEnv,
        ...(step.verifierUser !== undefined ? { user: step.verifierUser } : {}),
        ...(step.kotlinExpected ? { expectedTests: step.kotlinExpected } : {}),
      };
      const key = step.name ?? 'verifier';
      return {
        name: step.name,
        agentTask: {
          ...task,
          instruction: step.instruction,
          solution: step.solutionDir ? { kind: 'script', dir: step.solutionDir } : { kind: 'none' },
        },
        ...(step.agentTimeoutSec !== undefined ? { agentTimeoutSec: step.agentTimeoutSec } : {}),
        ...(step.agentUser !== undefined ? { agentUser: step.agentUser } : {}),
        ...(step.workdirDir ? { workdirDir: step.workdirDir } : {}),
        ...(step.healthcheck ? { healthcheck: step.healthcheck } : {}),
        networkTask: step.phaseNetwork
          ? { ...task, phaseNetwork: { ...(task.phaseNetwork ?? {}), ...step.phaseNetwork } }
          : task,
        artifacts: step.artifacts,
        verifier: {
          task: { ...task, verifier: verifierSpec },
          testsDirs: step.testsDirs,
          timeoutSec: step.verifierTimeoutSec,
          envTemplates: {
            env: step.verifierEnv,
            section: `${step.name ? `[steps.${step.name}.verifier]` : '[verifier]'} env`,
          },
          ...(step.verifierMode === 'separate' && step.verifierEnvironment
            ? {
                separate: {
                  task: separateVerifierTask(task, key, step.verifierEnvironment, verifierSpec),
                  key,
                },
              }
            : {}),
        },
        ...(step.minReward !== undefined ? { minReward: step.minReward } : {}),
      } satisfies StepPlan;
    }),
  };
}

/** The plan of a task without steps: the agent, then the task's verifier. */
function onePlan(task: Task): TrialPlan {
  return {
    multiStep: false,
    strategy: 'final',
    solutionEnv: {},
    steps: [
      {
        name: null,
        agentTask: task,
        ...(task.agentTimeoutSec !== undefined ? { agentTimeoutSec: task.agentTimeoutSec } : {}),
        networkTask: task,
        verifier: {
          task,
          timeoutSec: 'timeoutSec' in task.verifier ? task.verifier.timeoutSec : DEFAULT_VERIFIER_TIMEOUT_SEC,
        },
      },
    ],
  };
}

/**
 * The task of a separate verifier environment (Harbor's `_run_separate_verifier`): a container
 * built from the step's `tests/` (or the task's), with its own network and limits, `/tests` as
 * its image has it.
 */
function separateVerifierTask(
  task: Task,
  key: string,
  spec: VerifierEnvironmentSpec,
  verifier: Extract<Task['verifier'], { kind: 'harbor' }>,
): Task {
  const safe = key.replace(/[^A-Za-z0-9._-]/g, '_');
  const base = task.environment as Extract<EnvironmentSpec, { kind: 'docker' }>;
  const hasDockerfile = existsSync(join(spec.contextDir, 'Dockerfile'));
  return {
    ...task,
    name: `${task.name}__verifier__${safe}`,
    environment: {
      kind: 'docker',
      ...(spec.dockerImage && !hasDockerfile ? { image: spec.dockerImage } : {}),
      ...(hasDockerfile ? { dockerfileDir: spec.contextDir } : {}),
      contextDir: spec.contextDir,
      ...(spec.workdir ? { workdir: spec.workdir } : {}),
      ...(spec.cpus !== undefined ? { cpus: spec.cpus } : {}),
      ...(spec.memoryMb !== undefined ? { memoryMb: spec.memoryMb } : {}),
      ...(spec.storageMb !== undefined ? { storageMb: spec.storageMb } : {}),
      ...(spec.gpus !== undefined ? { gpus: spec.gpus } : {}),
      ...(spec.env ? { env: spec.env } : {}),
      ...(spec.buildTimeoutSec !== undefined ? { buildTimeoutSec: spec.buildTimeoutSec } : {}),
      network: spec.network,
      ...(base.basesDir ? { basesDir: base.basesDir } : {}),
      imageName: `${String(base.imageName ?? `hb__${task.name}`)}__verifier__${safe.toLowerCase()}`,
    },
    verifier: { ...verifier, testsDir: spec.contextDir, testsInImage: true },
    phaseNetwork: {},
  };
}
