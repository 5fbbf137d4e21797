/**
 * One trial's `result.json` (berth's, berth's `multilingual run`'s, or Harbor's TrialResult) as a
 * TrialRecord, and the one-line reason it ended as it did. Pure: the console reporter calls it on
 * a result in memory, the job reader on the files.
 */
import type { PhaseName, TestCount, TestVerdict, TrialOutcome, TrialRecord } from './model.ts';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** Seconds between two ISO times; null when either is missing or unparsable. */
export function secondsBetween(start: unknown, end: unknown): number | null {
  if (typeof start !== 'string' || typeof end !== 'string' || start === '' || end === '') return null;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) && ms >= 0 ? ms / 1000 : null;
}

const phaseSeconds = (timing: unknown): number | null =>
  isObject(timing) ? secondsBetween(timing.started_at, timing.finished_at) : null;

/** Harbor's timing fields by the phase names the report uses. */
const TIMING_FIELDS: Record<PhaseName, string> = {
  environment: 'environment_setup',
  agent_setup: 'agent_setup',
  agent: 'agent_execution',
  verifier: 'verifier',
};

/** Where each of Harbor's (and berth's) exception types is raised (harbor-format §5.5). */
const EXCEPTION_PHASE: Record<string, PhaseName> = {
  EnvironmentStartTimeoutError: 'environment',
  SandboxBuildFailedError: 'environment',
  HealthcheckError: 'environment',
  ImageBuildError: 'environment',
  EnvironmentSetupError: 'environment',
  EnvironmentRepositoryError: 'environment',
  AgentSetupTimeoutError: 'agent_setup',
  AgentSetupError: 'agent_setup',
  AgentTimeoutError: 'agent',
  NonZeroAgentExitCodeError: 'agent',
  AgentWorkError: 'agent',
  VerifierTimeoutError: 'verifier',
  RewardFileNotFoundError: 'verifier',
  RewardFileEmptyError: 'verifier',
  VerifierOutputParseError: 'verifier',
  AddTestsDirError: 'verifier',
  DownloadVerifierDirError: 'verifier',
  TestPatchApplyError: 'verifier',
};

/**
 * The phase an exception was raised in: where its type is raised (Harbor's and berth's known
 * types), else the last phase that had started when it occurred.
 */
export function exceptionPhase(result: Json, type: string, occurredAt: unknown): PhaseName | null {
  const known = EXCEPTION_PHASE[type];
  if (known) return known;
  const at = typeof occurredAt === 'string' ? Date.parse(occurredAt) : Number.NaN;
  if (Number.isFinite(at)) {
    let found: PhaseName | null = null;
    let latest = -Infinity;
    for (const [phase, field] of Object.entries(TIMING_FIELDS) as Array<[PhaseName, string]>) {
      const timing = result[field];
      if (!isObject(timing) || typeof timing.started_at !== 'string') continue;
      const start = Date.parse(timing.started_at);
      if (start <= at && start >= latest) {
        latest = start;
        found = phase;
      }
    }
    if (found) return found;
  }
  return null;
}

/** The reward the resolved rate counts: `reward`, else the only key. */
export function primaryReward(rewards: Record<string, number> | null): number | null {
  if (!rewards) return null;
  if (typeof rewards.reward === 'number') return rewards.reward;
  const values = Object.values(rewards);
  return values.length === 1 ? (values[0] as number) : null;
}

function rewardsOf(result: Json): Record<string, number> | null {
  const verifier = result.verifier_result;
  if (!isObject(verifier) || !isObject(verifier.rewards)) return null;
  const rewards: Record<string, number> = {};
  for (const [key, value] of Object.entries(verifier.rewards))
    if (num(value) !== null) rewards[key] = value as number;
  return Object.keys(rewards).length > 0 ? rewards : null;
}

function countOf(value: unknown): TestCount | null {
  if (!isObject(value)) return null;
  const passed = num(value.passed);
  const total = num(value.total);
  return passed !== null && total !== null ? { passed, total } : null;
}

/** SWE-bench's category names for the short names the multilingual verifier writes. */
const CATEGORY_NAMES: Record<string, string> = {
  f2p: 'FAIL_TO_PASS',
  p2p: 'PASS_TO_PASS',
  p2f: 'PASS_TO_FAIL',
  f2f: 'FAIL_TO_FAIL',
};

/**
 * The per-test verdicts a trial recorded: berth's `verifier_details.tests` (SWE-bench rows),
 * or the multilingual verifier's `verdicts` (in `verifier/report.json`, passed as `report`).
 */
export function testsOf(result: Json, report?: unknown): TestVerdict[] {
  const berth = isObject(result.berth) ? result.berth : {};
  const details = isObject(berth.verifier_details) ? berth.verifier_details : {};
  const fromReport = isObject(report) && isObject(report.details) ? report.details.verdicts : undefined;
  const list = Array.isArray(details.tests) ? details.tests : Array.isArray(fromReport) ? fromReport : [];
  const tests: TestVerdict[] = [];
  for (const item of list) {
    if (!isObject(item)) continue;
    const id = str(item.id) ?? str(item.name);
    if (id === null) continue;
    const category = str(item.category) ?? '';
    const passed = item.passed === true;
    tests.push({
      id,
      category: CATEGORY_NAMES[category] ?? category,
      status: str(item.status) ?? (passed ? 'PASSED' : 'FAILED'),
      passed,
      reason: str(item.reason) ?? (passed ? null : (str(item.status)?.toLowerCase() ?? 'failed')),
    });
  }
  return tests;
}

/**
 * Whether a trial's per-test verdicts are in its `verifier/report.json`: the multilingual
 * verifier's (berth's own details hold no test list for them), and a trial without berth's
 * `verifier_details` (an earlier berth's multilingual run).
 */
export function verdictsInReport(result: Json): boolean {
  const berth = isObject(result.berth) ? result.berth : {};
  const config = isObject(result.config) && isObject(result.config.berth) ? result.config.berth : {};
  return !isObject(berth.verifier_details) || config.task_format === 'multilingual';
}

/**
 * Whether the trial's tests ran, so its FAIL_TO_PASS / PASS_TO_PASS counts mean something.
 * False for `empty_patch` (SWE-bench runs no tests for an empty patch), `patch_failed`,
 * `cancelled`, and an `error` raised before the verifier started (e.g. the environment's
 * set-up failed): such trials carry `{passed: 0, total: N}` counts that were never measured.
 */
export function testsRan(result: Json): boolean {
  const berth = isObject(result.berth) ? result.berth : {};
  const status = str(berth.status);
  if (status === 'empty_patch' || status === 'patch_failed' || status === 'cancelled') return false;
  if (status === 'resolved' || status === 'unresolved') return true;
  return result.verifier !== null && result.verifier !== undefined;
}

/** The agent's exit code when it recorded a non-zero one (the command agent's metadata). */
function agentExitCode(result: Json): number | null {
  const agent = isObject(result.agent_result) ? result.agent_result : {};
  const metadata = isObject(agent.metadata) ? agent.metadata : agent;
  const code = num(metadata.command_exit_code) ?? num(metadata.exit_code);
  return code !== null && code !== 0 ? code : null;
}

function outcomeOf(
  result: Json,
  rewards: Record<string, number> | null,
  exceptionType: string | null,
): TrialOutcome {
  const berth = isObject(result.berth) ? result.berth : undefined;
  const status = berth ? str(berth.status) : null;
  if (status === 'cancelled' || exceptionType === 'CancelledError') return 'cancelled';
  if (berth?.resolved === true || status === 'resolved') return 'resolved';
  if (status === 'unresolved' || status === 'empty_patch') return 'failed';
  if (status === 'error' || status === 'patch_failed') return 'errored';
  const reward = primaryReward(rewards);
  if (reward !== null && reward >= 1) return 'resolved';
  if (exceptionType) return 'errored';
  return rewards ? 'failed' : 'errored';
}

/**
 * `text` without terminal control: escape sequences (colours, OSC titles, cursor moves) removed,
 * other control characters but tabs and line breaks shown as `\uFFFD`. An error's text comes from
 * untrusted output and ends up on the user's terminal (the console's why line).
 */
function printable(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are removed.
      .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b\[[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g, '')
      .replace(/\r\n?/g, '\n')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are replaced.
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\uFFFD')
  );
}

/**
 * `text` as one line of at most `max` characters that keeps its end, where an error says what
 * went wrong (the exception's line after a traceback, the last line of a failed command's
 * output): more than two lines become the first and the last, joined by ` … `, runs of spaces
 * one space; a line still too long keeps its head and, in two thirds of the room, its tail, cut
 * in the middle by `…`. Terminal control is taken out (`printable`).
 */
export function headTail(text: string, max: number): string {
  const lines = printable(text)
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const line = lines.length > 2 ? `${lines[0]} … ${lines[lines.length - 1]}` : lines.join(' ');
  if (line.length <= max) return line;
  const tail = Math.ceil(((max - 1) * 2) / 3);
  return `${line.slice(0, max - 1 - tail).trimEnd()}…${line.slice(line.length - tail).trimStart()}`;
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(4)));
}

/** `reward 1` or `reward 0, tests_passed 1`. */
export function describeRewards(rewards: Record<string, number>): string {
  return Object.entries(rewards)
    .map(([key, value]) => `${key} ${formatNumber(value)}`)
    .join(', ');
}

function describeFailingTests(tests: readonly TestVerdict[], shown: number): string | null {
  const failing = tests.filter((test) => !test.passed && /^(FAIL_TO_PASS|PASS_TO_PASS)$/.test(test.category));
  if (failing.length === 0) return null;
  // FAIL_TO_PASS first: the tests the task is about.
  failing.sort((a, b) => (a.category === b.category ? 0 : a.category === 'FAIL_TO_PASS' ? -1 : 1));
  const names = failing.slice(0, shown).map((test) => {
    const reason = test.reason && test.reason !== 'failed' ? ` (${test.reason})` : '';
    const prefix = test.category === 'PASS_TO_PASS' ? 'broke ' : '';
    return `${prefix}${headTail(test.id, 80)}${reason}`;
  });
  const more = failing.length > shown ? ` (+${failing.length - shown} more)` : '';
  return `failing: ${names.join(', ')}${more}`;
}

const fraction = (c: TestCount) => `${c.passed}/${c.total}`;

/** The last non-empty line of a text, without terminal colour codes. */
export function lastLine(text: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are removed.
  const lines = text.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line !== '') return line;
  }
  return null;
}

/** Whether a result needs the tests' last output line to say why (graded by rewards, not resolved). */
export function wantsOutputTail(result: Json): boolean {
  const berth = isObject(result.berth) ? result.berth : {};
  if (berth.resolved === true || berth.FAIL_TO_PASS || result.exception_info) return false;
  const reward = primaryReward(rewardsOf(result));
  return reward === null || reward < 1;
}

/** The facts `explainTrial` words. */
export interface ExplainInput {
  outcome: TrialOutcome;
  status: string;
  rewards: Record<string, number> | null;
  exception: { type: string; message: string; phase: string | null } | null;
  tests: readonly TestVerdict[];
  FAIL_TO_PASS: TestCount | null;
  PASS_TO_PASS: TestCount | null;
  agentExitCode: number | null;
  /** berth's note (the apply method, the discarded files...). */
  note: string | null;
  /** Whether the trial was graded by rewards alone (Harbor tasks): rewards are shown, not test counts. */
  rewardGraded: boolean;
  /** The last line the tests printed (`verifier/test-stdout.txt`), for trials graded by rewards. */
  outputTail?: string | null;
  /** The task's own grading and berth's disagree (Kotlin Benchmark): both rewards and why. */
  disagreement?: string | null;
}

/** `verifier_details.reference_disagreement` (src/verifiers/kotlin-harbor.ts) in words, or null. */
export function referenceDisagreementOf(details: unknown): string | null {
  const d =
    isObject(details) && isObject(details.reference_disagreement) ? details.reference_disagreement : null;
  if (!d || typeof d.reason !== 'string') return null;
  return `the dataset's test.sh says reward ${num(d.reference_reward) ?? 'none'}, berth ${num(d.berth_reward)}: ${headTail(d.reason, 200)}`;
}

/**
 * Why a trial ended as it did, in one line: the first failing tests by name, or the exception
 * and its phase, or the agent's exit code, or (Harbor tasks) the rewards. Never "ok" for a trial
 * that is not resolved.
 */
export function explainTrial(input: ExplainInput): string {
  const exit = input.agentExitCode !== null ? `agent exited with code ${input.agentExitCode}` : null;
  const counts =
    input.FAIL_TO_PASS && input.PASS_TO_PASS
      ? `F2P ${fraction(input.FAIL_TO_PASS)}, P2P ${fraction(input.PASS_TO_PASS)}`
      : null;
  const rewards = input.rewards ? describeRewards(input.rewards) : null;
  const exception = input.exception
    ? `${input.exception.type}${input.exception.phase ? ` in ${input.exception.phase.replace('_', ' ')}` : ''}: ${headTail(input.exception.message, 160)}`
    : null;
  const join = (...parts: Array<string | null>) => parts.filter((part) => part).join('; ');
  switch (input.outcome) {
    case 'resolved':
      return join(
        input.rewardGraded ? rewards : (counts ?? rewards ?? 'resolved'),
        exception,
        input.disagreement ?? null,
      );
    case 'cancelled':
      return 'cancelled: the job was interrupted while this trial ran';
    case 'running':
      return 'running';
    case 'pending':
      return 'not started';
    case 'errored': {
      if (input.status === 'patch_failed')
        return join(input.note ? headTail(input.note, 200) : 'patch did not apply', exit);
      return join(
        exception ?? `no verdict${input.note ? `: ${headTail(input.note, 160)}` : ''}`,
        exit,
        rewards,
      );
    }
    default: {
      if (input.status === 'empty_patch') return join('empty patch: the agent changed nothing', exit);
      const failing = describeFailingTests(input.tests, 3);
      if (input.rewardGraded || (!failing && !counts)) {
        const tail = input.outputTail ? `the tests ended with: ${headTail(input.outputTail, 160)}` : null;
        return join(exception, exit, input.disagreement ?? tail) || (rewards ? rewards : 'no reward');
      }
      return join(failing ?? (input.note ? headTail(input.note, 200) : counts), exception, exit);
    }
  }
}

/** Category values of a trial: its own `berth.categories`, its `metadata`, or its task name. */
function categoriesOf(result: Json): {
  repository: string | null;
  language: string | null;
  task_type: string | null;
} {
  const berth = isObject(result.berth) ? result.berth : {};
  const own = isObject(berth.categories) ? berth.categories : {};
  const metadata = isObject(result.metadata) ? result.metadata : {};
  const source = isObject(berth.task_source) ? berth.task_source : {};
  const pick = (key: string) => str(own[key]) ?? str(metadata[key]) ?? str(result[key]);
  return {
    repository: pick('repository') ?? str(source.repository) ?? repositoryFromTaskName(str(result.task_name)),
    language: pick('language'),
    task_type: pick('task_type'),
  };
}

/**
 * SWE-bench's instance ids are `<owner>__<repo>-<number>` and the multilingual demo's
 * `<owner>__<repo>__<hash>`: the repository is `<owner>/<repo>`. Null for other names.
 */
export function repositoryFromTaskName(name: string | null): string | null {
  if (!name) return null;
  const multilingual = /^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+?)__[0-9a-f]{6,}$/.exec(name);
  if (multilingual) return `${multilingual[1]}/${multilingual[2]}`;
  const swebench = /^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)-\d+$/.exec(name);
  return swebench ? `${swebench[1]}/${swebench[2]}` : null;
}

/**
 * A trial's record from its `result.json` (parsed). `report` is the multilingual verifier's
 * `verifier/report.json` when the result itself carries no test verdicts; `fallbackName` the
 * trial folder's name.
 */
export function trialRecordFromResult(
  result: Json,
  options: { fallbackName: string; report?: unknown; jobRow?: Json; outputTail?: string | null },
): TrialRecord {
  const berth = isObject(result.berth) ? result.berth : undefined;
  const rewards = rewardsOf(result);
  const info = isObject(result.exception_info) ? result.exception_info : undefined;
  const type = info ? (str(info.exception_type) ?? 'Error') : null;
  const exception =
    info && type
      ? {
          type,
          message: typeof info.exception_message === 'string' ? info.exception_message : '',
          phase: exceptionPhase(result, type, info.occurred_at),
        }
      : null;
  const outcome = outcomeOf(result, rewards, type);
  const status = (berth && str(berth.status)) ?? (outcome === 'failed' ? 'unresolved' : outcome);
  const tests = testsOf(result, options.report);
  const reportCounts =
    isObject(options.report) && isObject(options.report.details) && isObject(options.report.details.counts)
      ? options.report.details.counts
      : isObject(options.jobRow?.counts)
        ? (options.jobRow.counts as Json)
        : {};
  // Counts of tests that never ran (an empty patch, a patch that did not apply) are not shown.
  const ran = testsRan(result);
  const f2p = ran ? (countOf(berth?.FAIL_TO_PASS) ?? countOf(reportCounts.f2p)) : null;
  const p2p = ran ? (countOf(berth?.PASS_TO_PASS) ?? countOf(reportCounts.p2p)) : null;
  const agentInfo = isObject(result.agent_info) ? result.agent_info : {};
  const modelInfo = isObject(agentInfo.model_info) ? agentInfo.model_info : {};
  const agentResult = isObject(result.agent_result) ? result.agent_result : {};
  const categories = categoriesOf({ ...(options.jobRow ?? {}), ...result });
  const phases = Object.fromEntries(
    (Object.entries(TIMING_FIELDS) as Array<[PhaseName, string]>).map(([phase, field]) => [
      phase,
      phaseSeconds(result[field]),
    ]),
  ) as Record<PhaseName, number | null>;
  const rewardGraded = !tests.length && !f2p && rewards !== null;
  return {
    name: str(result.trial_name) ?? options.fallbackName,
    task: str(result.task_name) ?? str(berth?.instance_id) ?? options.fallbackName,
    attempt: num(berth?.attempt) ?? num(options.jobRow?.attempt) ?? 1,
    outcome,
    status,
    rewards,
    reward: primaryReward(rewards),
    exception,
    why: explainTrial({
      outcome,
      status,
      rewards,
      exception,
      tests,
      FAIL_TO_PASS: f2p,
      PASS_TO_PASS: p2p,
      agentExitCode: agentExitCode(result),
      note: berth ? str(berth.note) : null,
      rewardGraded,
      outputTail: options.outputTail ?? null,
      disagreement: referenceDisagreementOf(berth?.verifier_details),
    }),
    agent: str(agentInfo.name) ?? 'unknown',
    model: str(modelInfo.name) ?? str(agentResult.model_name),
    dataset: str(result.source),
    ...categories,
    FAIL_TO_PASS: f2p,
    PASS_TO_PASS: p2p,
    phases,
    duration_sec: secondsBetween(result.started_at, result.finished_at) ?? num(berth?.duration_sec),
    input_tokens: num(agentResult.n_input_tokens),
    cache_tokens: num(agentResult.n_cache_tokens),
    output_tokens: num(agentResult.n_output_tokens),
    cost_usd: num(agentResult.cost_usd),
    started_at: str(result.started_at),
    finished_at: str(result.finished_at),
  };
}

/** A record with nothing known but the trial's name, task and outcome (a trial not finished, a test's start). */
export function blankTrialRecord(name: string, task: string, outcome: TrialOutcome): TrialRecord {
  return {
    name,
    task,
    attempt: 1,
    outcome,
    status: outcome,
    rewards: null,
    reward: null,
    exception: null,
    why: '',
    agent: 'unknown',
    model: null,
    dataset: null,
    repository: null,
    language: null,
    task_type: null,
    FAIL_TO_PASS: null,
    PASS_TO_PASS: null,
    phases: { environment: null, agent_setup: null, agent: null, verifier: null },
    duration_sec: null,
    input_tokens: null,
    cache_tokens: null,
    output_tokens: null,
    cost_usd: null,
    started_at: null,
    finished_at: null,
  };
}
