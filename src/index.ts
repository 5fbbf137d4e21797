/**
 * berth as a library: `import { loadTasks, planTrials, runJob } from 'berth'` (after
 * `npm run build`). The same pipeline as the command line, stage by stage: load tasks, plan
 * trials, run them (a job, or one trial from its spec), with the registries every stage plugs
 * into. See docs/architecture.md.
 */
import './tasks/multilingual/register.ts';

export type { Agent, AgentContext, AgentInfo, AgentResult, AgentSetupContext } from './agents/agent.ts';
export { type AgentOptions, agentNames, createAgent, registerAgent } from './agents/registry.ts';
export type {
  Environment,
  EnvironmentProvider,
  EnvironmentStartContext,
  ExecOptions,
  ExecResult,
} from './environments/environment.ts';
export { createProviders, registerEnvironmentProvider } from './environments/registry.ts';
export { BerthError, InputError, UsageError } from './errors.ts';
export { type EvaluateOptions, type EvaluateSummary, evaluate } from './functional/evaluate.ts';
export { passAtK } from './functional/pass-at-k.ts';
export { type JobOptions, type JobSummary, runJob } from './jobs/job.ts';
export { defaultJobName } from './jobs/names.ts';
export { type PlannedTrial, type PlanOptions, planTrials } from './jobs/plan.ts';
export { createReporters, registerReporter, reporterNames } from './reporters/registry.ts';
export type { Reporter, ReporterContext, ReporterFactory, RunScope } from './reporters/reporter.ts';
export { taskChecksum } from './tasks/checksum.ts';
export { loadTasks, placeTasks, registerTaskLoader, type TaskLoader } from './tasks/registry.ts';
export type { EnvironmentSpec, NetworkPolicy, SolutionSpec, Task, VerifierSpec } from './tasks/task.ts';
export { type RunTrialOptions, runTrial } from './trials/engine.ts';
export {
  type BerthEvent,
  berthEventSchema,
  type Emit,
  EVENTS_SCHEMA_VERSION,
  type EventOf,
  parseEventLine,
  type TrialEmit,
} from './trials/events.ts';
export type { ExceptionInfo, TrialResult, TrialStatus } from './trials/result.ts';
export { providersFor, runtimeFor, type TrialRuntime } from './trials/runtime.ts';
export {
  type AgentSpec,
  type EnvironmentOptions,
  loadTaskRef,
  makeTrialSpec,
  parseTrialSpec,
  type TaskRef,
  TRIAL_SPEC_VERSION,
  type TrialLimits,
  type TrialSpec,
  type TrialTimeouts,
  trialKey,
  type VerificationOptions,
} from './trials/spec.ts';
export { createVerifiers, registerVerifier } from './verifiers/registry.ts';
export type { TestCounts, Verifier, VerifierResult, VerifyContext } from './verifiers/verifier.ts';
export { VERSION } from './version.ts';
