/**
 * Is a job folder one Harbor's own tools read? Checks every file Harbor's models and its viewer's
 * job scanner (`harbor.viewer.scanner.JobScanner`: `JobConfig`, `JobResult`, `TrialResult`
 * parsed with pydantic) read, against Harbor's models as JSON Schemas (test/fixtures/harbor-schemas/,
 * with ajv and ajv-formats for `uuid` and `date-time`), plus what pydantic checks in Python and a
 * schema cannot say (a task's `path` xor `name`, `ref` only with `name`, numeric `reward_stats`
 * keys, whole `pass_at_k` keys, an agent with a name), plus the values berth must get right (a
 * trial's `config` is its config.json, its `job_id` the job's id, `trial.log` and `exception.txt`
 * are there, `agent_setup` is recorded whenever the agent ran).
 *
 * Every job folder the test suite writes is checked after each test
 * (test/helpers/harbor-job-check.setup.ts); a test that damages a job folder on purpose says so
 * with `notHarborJobFolder(dir, why)`.
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fixturesDir } from './data.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MODELS = ['JobConfig', 'JobResult', 'TrialConfig', 'TrialResult'] as const;
type Model = (typeof MODELS)[number] | 'StepResult';

let validators: Record<Model, ValidateFunction> | undefined;

function validator(model: Model): ValidateFunction {
  if (!validators) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv, ['uuid', 'date-time']);
    ajv.addFormat('path', true);
    const schemas = Object.fromEntries(
      MODELS.map((name) => [
        name,
        JSON.parse(readFileSync(join(fixturesDir, 'harbor-schemas', `${name}.schema.json`), 'utf8')) as Json,
      ]),
    ) as Record<(typeof MODELS)[number], Json>;
    const trialResult = schemas.TrialResult;
    validators = {
      ...(Object.fromEntries(MODELS.map((name) => [name, ajv.compile(schemas[name])])) as Record<
        (typeof MODELS)[number],
        ValidateFunction
      >),
      // A multi-step trial's steps/<name>/result.json: Harbor's StepResult.
      StepResult: ajv.compile({
        $ref: '#/$defs/StepResult',
        $defs: trialResult.$defs as Json,
      }),
    };
  }
  return validators[model];
}

function validate(model: Model, value: unknown, file: string, problems: string[]): boolean {
  const check = validator(model);
  if (check(value)) return true;
  for (const e of (check.errors ?? []).slice(0, 8))
    problems.push(`${file}: ${model}${e.instancePath} ${e.message ?? ''}`);
  return false;
}

function readJson(path: string, problems: string[], label: string): Json | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    problems.push(`${label}: not readable JSON (${(error as Error).message})`);
    return undefined;
  }
  if (!isObject(value)) {
    problems.push(`${label}: not a JSON object`);
    return undefined;
  }
  return value;
}

/** Harbor's `TaskConfig.validate_task_source` (src/harbor/models/trial/config.py). */
function taskConfigProblems(task: unknown, where: string): string[] {
  if (!isObject(task)) return [`${where}: not an object`];
  const out: string[] = [];
  const hasPath = task.path !== undefined && task.path !== null;
  const hasName = task.name !== undefined && task.name !== null;
  if (hasPath === hasName) out.push(`${where}: exactly one of path and name must be set`);
  if (task.ref != null && !hasName) out.push(`${where}: ref requires name`);
  if (task.git_commit_id != null && task.git_url == null)
    out.push(`${where}: git_commit_id requires git_url`);
  if (hasName && !String(task.name).includes('/')) out.push(`${where}: name must be org/name`);
  return out;
}

/** Harbor's `AgentConfig`: a name or an import path (else Harbor reads it back as the oracle). */
function agentConfigProblems(agent: unknown, where: string): string[] {
  if (!isObject(agent)) return [`${where}: not an object`];
  return agent.name == null && agent.import_path == null
    ? [`${where}: neither name nor import_path (Harbor would read the oracle)`]
    : [];
}

/** What pydantic checks of a TrialConfig beyond the schema, and berth's values. */
function trialConfigProblems(config: Json, where: string): string[] {
  const out = [...taskConfigProblems(config.task, `${where} task`)];
  out.push(...agentConfigProblems(config.agent, `${where} agent`));
  if (!isObject(config.berth)) out.push(`${where}: berth's facts are not under \`berth\``);
  return out;
}

/** Harbor's JobStats keys pydantic parses: `reward_stats` values as numbers, `pass_at_k` ks as integers. */
function statsProblems(stats: unknown, where: string): string[] {
  if (!isObject(stats) || !isObject(stats.evals)) return [];
  const out: string[] = [];
  for (const [key, evaluation] of Object.entries(stats.evals)) {
    if (!isObject(evaluation)) continue;
    for (const k of Object.keys(isObject(evaluation.pass_at_k) ? evaluation.pass_at_k : {}))
      if (!/^-?\d+$/.test(k)) out.push(`${where} evals.${key}.pass_at_k: key ${k} is not an integer`);
    for (const [reward, byValue] of Object.entries(
      isObject(evaluation.reward_stats) ? evaluation.reward_stats : {},
    ))
      for (const v of Object.keys(isObject(byValue) ? byValue : {}))
        if (!Number.isFinite(Number(v)) || v.trim() === '')
          out.push(`${where} evals.${key}.reward_stats.${reward}: value key ${v} is not a number`);
  }
  return out;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The problems that keep Harbor's tools from reading a job folder as berth meant it; empty when
 * there are none. A folder without a config.json or result.json of its own is not a job folder
 * (nothing to check).
 */
export function harborJobFolderProblems(jobDir: string): string[] {
  const problems: string[] = [];
  const configFile = join(jobDir, 'config.json');
  const resultFile = join(jobDir, 'result.json');
  let jobId: unknown;
  if (existsSync(configFile)) {
    const config = readJson(configFile, problems, 'config.json');
    if (config && validate('JobConfig', config, 'config.json', problems)) {
      const datasets = Array.isArray(config.datasets) ? config.datasets : [];
      const tasks = Array.isArray(config.tasks) ? config.tasks : [];
      datasets.forEach((d, i) => {
        if (!isObject(d)) return;
        if ((d.path == null) === (d.name == null))
          problems.push(`config.json datasets[${i}]: exactly one of path and name must be set`);
        if (d.version != null && d.ref != null)
          problems.push(`config.json datasets[${i}]: both version and ref`);
      });
      for (const [i, t] of tasks.entries())
        problems.push(...taskConfigProblems(t, `config.json tasks[${i}]`));
      const agents = Array.isArray(config.agents) ? config.agents : [];
      if (agents.length === 0) problems.push('config.json: no agents (Harbor would read the oracle)');
      for (const [i, a] of agents.entries())
        problems.push(...agentConfigProblems(a, `config.json agents[${i}]`));
      if (datasets.length + tasks.length === 0) problems.push('config.json: neither datasets nor tasks');
      if (!isObject(config.berth)) problems.push("config.json: berth's settings are not under `berth`");
    }
  }
  if (existsSync(resultFile)) {
    const result = readJson(resultFile, problems, 'result.json');
    if (result && validate('JobResult', result, 'result.json', problems)) {
      jobId = result.id;
      problems.push(...statsProblems(result.stats, 'result.json stats'));
      if (!isObject(result.berth)) problems.push("result.json: berth's counts are not under `berth`");
      if (!existsSync(join(jobDir, 'job.log'))) problems.push('job.log is missing');
    }
  }
  for (const entry of readdirSync(jobDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const trialDir = join(jobDir, entry.name);
    const trialConfigFile = join(trialDir, 'config.json');
    const trialResultFile = join(trialDir, 'result.json');
    const label = (file: string) => `${entry.name}/${file}`;
    let trialConfig: Json | undefined;
    if (existsSync(trialConfigFile)) {
      trialConfig = readJson(trialConfigFile, problems, label('config.json'));
      if (trialConfig && validate('TrialConfig', trialConfig, label('config.json'), problems)) {
        problems.push(...trialConfigProblems(trialConfig, label('config.json')));
        if (jobId !== undefined && trialConfig.job_id !== jobId)
          problems.push(`${label('config.json')}: job_id ${trialConfig.job_id} is not the job's id ${jobId}`);
      }
    }
    if (!existsSync(trialResultFile)) continue;
    const result = readJson(trialResultFile, problems, label('result.json'));
    if (!result || !validate('TrialResult', result, label('result.json'), problems)) continue;
    const config = result.config as Json;
    problems.push(...trialConfigProblems(config, label('result.json config')));
    if (trialConfig && !sameJson(config, trialConfig))
      problems.push(`${label('result.json')}: config differs from config.json`);
    const taskId = result.task_id as Json;
    if (isObject(config.task) && 'path' in taskId && taskId.path !== config.task.path)
      problems.push(`${label('result.json')}: task_id.path is not config.task.path`);
    // An earlier berth's trial (no events.jsonl), kept on resume, has no log to show.
    if (existsSync(join(trialDir, 'events.jsonl')) && !existsSync(join(trialDir, 'trial.log')))
      problems.push(`${label('trial.log')} is missing`);
    const hasException = result.exception_info != null;
    if (hasException !== existsSync(join(trialDir, 'exception.txt')))
      problems.push(
        hasException
          ? `${label('exception.txt')} is missing (the trial recorded an exception)`
          : `${label('exception.txt')} exists but the trial recorded no exception`,
      );
    if (result.agent_execution != null && result.agent_setup == null)
      problems.push(`${label('result.json')}: agent_setup is null although the agent ran`);
    const steps = join(trialDir, 'steps');
    if (existsSync(steps) && lstatSync(steps).isDirectory())
      for (const step of readdirSync(steps)) {
        const stepFile = join(steps, step, 'result.json');
        if (!existsSync(stepFile)) continue;
        const stepResult = readJson(stepFile, problems, label(`steps/${step}/result.json`));
        if (stepResult) validate('StepResult', stepResult, label(`steps/${step}/result.json`), problems);
      }
  }
  return problems;
}

/** Job folders a test damages on purpose, with why (not checked). */
export const exemptJobFolders = new Map<string, string>();

/** Says that a test damages (or hand-writes) this job folder on purpose: it is not checked. */
export function notHarborJobFolder(dir: string, why: string): void {
  exemptJobFolders.set(dir, why);
}
