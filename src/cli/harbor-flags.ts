/**
 * `harbor run`'s command line on `berth run`: Harbor's spellings of berth's options, and
 * `-c/--config`, Harbor's job configuration file (`harbor.models.job.config.JobConfig`, YAML or
 * JSON), read into the same options. A flag given on the command line wins over the file, as
 * in Harbor (`src/harbor/cli/jobs.py`: the flags override the values from `-c`). What berth
 * cannot do of a JobConfig is refused with the field named, never ignored.
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { InputError, UsageError } from '../errors.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../jobs/job-files.ts';
import type { ArtifactRequest } from '../trials/spec.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { RunCommandOptions } from './commands/run.ts';

/** Harbor's environment types berth does not run (`-e`); berth runs `docker` and its `local` sandbox. */
export const HARBOR_CLOUD_ENVIRONMENTS = [
  'daytona',
  'e2b',
  'modal',
  'runloop',
  'langsmith',
  'gke',
  'novita',
  'apple-container',
  'singularity',
  'islo',
  'tensorlake',
  'cwsandbox',
  'wandb',
  'use-computer',
];

/** What `berth run` does beyond its plain options, from Harbor's flags and `-c`. */
export interface HarborRunSettings {
  retry: RetryPolicy;
  /** `--artifact` paths and the config's `artifacts` entries. */
  artifacts: ArtifactRequest[];
  /** `--ve` / `--verifier-env` and the config's `verifier.env`. */
  verifierEnv: Record<string, string>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Folds Harbor's spellings into berth's options (`--n-attempts` into `--attempts`...), reads
 * `-c`, and checks what only Harbor has (`-e daytona`).
 * @param given the options given on the command line (not defaults), by attribute name
 * @throws UsageError / InputError for a bad flag or configuration
 */
export async function harborRunOptions(
  options: RunCommandOptions,
  given: ReadonlySet<string>,
): Promise<{ options: RunCommandOptions; settings: HarborRunSettings }> {
  const o: RunCommandOptions = { ...options };
  const from = (alias: keyof RunCommandOptions, name: keyof RunCommandOptions) => {
    if (o[alias] === undefined) return;
    if (given.has(name as string))
      throw new UsageError(
        `--${kebab(alias as string)} and --${kebab(name as string)} are the same option; give one`,
      );
    (o as unknown as Record<string, unknown>)[name] = o[alias];
    (given as Set<string>).add(name as string);
  };
  from('nAttempts', 'attempts');
  from('nConcurrent', 'concurrency');
  from('nTasks', 'limit');
  if (o.includeTaskName) o.include = [...(o.include ?? []), ...o.includeTaskName];
  if (o.excludeTaskName) o.exclude = [...(o.exclude ?? []), ...o.excludeTaskName];
  if (o.silent) o.quiet = true;
  if (o.rebuild) o.forceBuild = true;
  const ve = [...(o.ve ?? []), ...(o.verifierEnv ?? [])];
  if (o.enableVerification && o.disableVerification)
    throw new UsageError('--disable-verification and --enable-verification: give one');

  let configArtifacts: ArtifactRequest[] = [];
  let configVerifierEnv: Record<string, string> = {};
  let retry: RetryPolicy = { ...DEFAULT_RETRY };
  if (o.config !== undefined) {
    const read = await readJobConfig(o.config);
    for (const [key, value] of Object.entries(read.options))
      if (!given.has(key) && value !== undefined) (o as unknown as Record<string, unknown>)[key] = value;
    configArtifacts = read.artifacts;
    configVerifierEnv = read.verifierEnv;
    retry = { ...retry, ...read.retry };
  }
  if (o.maxRetries !== undefined) {
    if (!/^\d+$/.test(o.maxRetries))
      throw new UsageError(`-r/--max-retries expects a whole number, got ${JSON.stringify(o.maxRetries)}`);
    retry.max_retries = Number(o.maxRetries);
  }
  if (o.retryInclude) retry.include_exceptions = [...o.retryInclude];
  if (o.retryExclude) retry.exclude_exceptions = [...o.retryExclude];

  if (o.env !== undefined && o.env !== 'docker' && o.env !== 'local')
    throw new UsageError(
      HARBOR_CLOUD_ENVIRONMENTS.includes(o.env)
        ? `-e ${o.env}: berth runs trials in Docker or in its local sandbox (-e docker, -e local); Harbor's ${o.env} environment is not part of berth`
        : `-e/--env expects docker or local, got ${JSON.stringify(o.env)}${didYouMean(o.env, ['docker', 'local'])}`,
    );

  const verifierEnv = { ...configVerifierEnv, ...parseAssignments('--ve', ve) };
  const artifacts: ArtifactRequest[] = [...configArtifacts, ...(o.artifact ?? [])];
  return { options: o, settings: { retry, artifacts, verifierEnv } };
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * `NAME=VALUE` items of a repeatable flag (`--ve`, `--agent-env`) as a record. With `fromEnv`,
 * a bare `NAME` takes this process's value of it.
 * @throws UsageError for an item that is not NAME=VALUE (or NAME), or a bare NAME not set
 */
export function parseAssignments(
  flag: string,
  items: readonly string[],
  fromEnv = false,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    const name = eq !== -1 ? item.slice(0, eq) : fromEnv ? item : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError(
        `${flag} expects NAME=VALUE${fromEnv ? ' or NAME' : ''}, got ${JSON.stringify(item)}`,
      );
    const value = eq === -1 ? process.env[name] : item.slice(eq + 1);
    if (value === undefined) throw new UsageError(`${flag} ${name}: ${name} is not set in this environment`);
    out[name] = value;
  }
  return out;
}

/** A JobConfig read into berth's options. */
interface ReadJobConfig {
  options: Partial<RunCommandOptions>;
  retry: Partial<RetryPolicy>;
  artifacts: ArtifactRequest[];
  verifierEnv: Record<string, string>;
}

/**
 * Reads Harbor's JobConfig (`-c`, YAML or JSON) into `berth run`'s options. Relative paths in
 * it are taken from the current folder, as Harbor takes them.
 * @throws InputError naming the file and field of what is malformed or what berth cannot do
 */
export async function readJobConfig(file: string): Promise<ReadJobConfig> {
  const ext = extname(file).toLowerCase();
  if (ext === '.toml')
    throw new UsageError(
      `-c/--config is Harbor's job configuration (YAML or JSON); berth's settings file (${file}: [docker.image_map], docker.pids_limit) is given with --settings`,
    );
  // A missing or unreadable file is said as every input path is (src/util/input-files.ts).
  const text = await readFile(file, 'utf8');
  let data: unknown;
  try {
    data = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    // YAML's errors carry their position (linePos); JSON's are said without one.
    const at = (error as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    throw new InputError(
      { file, ...(at ? { line: at.line, column: at.col } : {}) },
      `invalid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  if (!isObject(data))
    throw new InputError({ file }, "Harbor's job configuration must be a mapping (JobConfig)");
  if (isObject(data.docker) && !('agents' in data || 'datasets' in data || 'tasks' in data))
    throw new UsageError(
      `-c/--config is Harbor's job configuration (YAML or JSON); ${file} looks like berth's settings file ([docker]): give it with --settings`,
    );
  const bad = (field: string, message: string): never => {
    throw new InputError({ file, field }, message);
  };
  const options: Partial<RunCommandOptions> = {};
  const retry: Partial<RetryPolicy> = {};
  const str = (field: string, v: unknown): string | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v === '') return bad(field, `expects a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const num = (field: string, v: unknown, whole = false): string | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !(v >= 0) || (whole && !Number.isInteger(v)))
      return bad(field, `expects a ${whole ? 'whole ' : ''}number, got ${JSON.stringify(v)}`);
    return String(v);
  };
  const bool = (field: string, v: unknown): boolean | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') return bad(field, `expects true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const strings = (field: string, v: unknown): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
      return bad(field, 'expects a list of strings');
    return v as string[];
  };
  const env = (field: string, v: unknown): Record<string, string> => {
    if (v === undefined || v === null) return {};
    // Harbor's legacy list form (`["K=V"]`) is accepted too.
    if (Array.isArray(v))
      return Object.fromEntries(
        v.map((item, i) => {
          const text = String(item);
          const eq = text.indexOf('=');
          if (eq <= 0) bad(`${field}[${i}]`, `expects NAME=VALUE, got ${JSON.stringify(item)}`);
          return [text.slice(0, eq), text.slice(eq + 1)];
        }),
      );
    if (!isObject(v)) return bad(field, 'expects a mapping of names to values');
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
  };
  const unsupported = (field: string, v: unknown, what: string) => {
    const empty =
      v === undefined ||
      v === null ||
      v === false ||
      (Array.isArray(v) && v.length === 0) ||
      (isObject(v) && Object.keys(v).length === 0);
    if (!empty) bad(field, `${what}: not supported by berth`);
  };

  // Job settings. Harbor's legacy `orchestrator: {n_concurrent_trials, quiet, retry}` too.
  const orchestrator = isObject(data.orchestrator) ? data.orchestrator : {};
  options.jobName = str('job_name', data.job_name);
  const jobsDir = str('jobs_dir', data.jobs_dir);
  if (jobsDir !== undefined) options.jobsDir = jobsDir;
  options.attempts = num('n_attempts', data.n_attempts, true);
  options.timeoutMultiplier = num('timeout_multiplier', data.timeout_multiplier);
  options.agentTimeoutMultiplier = num('agent_timeout_multiplier', data.agent_timeout_multiplier);
  options.verifierTimeoutMultiplier = num('verifier_timeout_multiplier', data.verifier_timeout_multiplier);
  options.agentSetupTimeoutMultiplier = num(
    'agent_setup_timeout_multiplier',
    data.agent_setup_timeout_multiplier,
  );
  options.environmentBuildTimeoutMultiplier = num(
    'environment_build_timeout_multiplier',
    data.environment_build_timeout_multiplier,
  );
  if (bool('debug', data.debug)) options.debug = true;
  options.concurrency = num(
    'n_concurrent_trials',
    data.n_concurrent_trials ?? orchestrator.n_concurrent_trials,
    true,
  );
  if (bool('quiet', data.quiet ?? orchestrator.quiet)) options.quiet = true;
  const retryData = data.retry ?? orchestrator.retry;
  if (retryData !== undefined && retryData !== null) {
    if (!isObject(retryData)) bad('retry', 'expects a mapping (RetryConfig)');
    const r = retryData as Json;
    const maxRetries = num('retry.max_retries', r.max_retries, true);
    if (maxRetries !== undefined) retry.max_retries = Number(maxRetries);
    if (r.include_exceptions !== undefined)
      retry.include_exceptions = strings('retry.include_exceptions', r.include_exceptions) ?? null;
    const exclude = strings('retry.exclude_exceptions', r.exclude_exceptions);
    if (exclude) retry.exclude_exceptions = exclude;
    for (const key of ['wait_multiplier', 'min_wait_sec', 'max_wait_sec'] as const) {
      const value = num(`retry.${key}`, r[key]);
      if (value !== undefined) retry[key] = Number(value);
    }
  }

  // Environment.
  if (data.environment !== undefined && data.environment !== null) {
    if (!isObject(data.environment)) bad('environment', 'expects a mapping (EnvironmentConfig)');
    const e = data.environment as Json;
    const type = str('environment.type', e.type);
    if (type !== undefined && type !== 'docker')
      bad(
        'environment.type',
        HARBOR_CLOUD_ENVIRONMENTS.includes(type)
          ? `Harbor's ${type} environment is not part of berth (berth runs Docker and its local sandbox)`
          : `unknown environment type ${JSON.stringify(type)}`,
      );
    unsupported('environment.import_path', e.import_path, 'a custom environment class');
    const forceBuild = bool('environment.force_build', e.force_build);
    if (forceBuild !== undefined) options.forceBuild = forceBuild;
    const del = bool('environment.delete', e.delete);
    if (del !== undefined) options.delete = del;
    options.overrideCpus = num('environment.override_cpus', e.override_cpus);
    options.overrideMemoryMb = num('environment.override_memory_mb', e.override_memory_mb);
    options.overrideStorageMb = num('environment.override_storage_mb', e.override_storage_mb);
    unsupported('environment.override_gpus', e.override_gpus, 'GPUs');
    unsupported('environment.override_tpu', e.override_tpu, 'TPUs');
    unsupported('environment.mounts', e.mounts, 'volume mounts');
    unsupported('environment.extra_docker_compose', e.extra_docker_compose, 'extra compose files');
    unsupported('environment.env', e.env, 'environment variables for every environment');
    unsupported('environment.kwargs', e.kwargs, 'environment kwargs');
    for (const key of ['cpu_enforcement_policy', 'memory_enforcement_policy'] as const) {
      const policy = str(`environment.${key}`, e[key]);
      if (policy !== undefined && policy !== 'auto' && policy !== 'limit')
        bad(`environment.${key}`, `${policy}: berth always enforces the limits (auto or limit)`);
    }
  }

  // Verifier.
  let verifierEnv: Record<string, string> = {};
  if (data.verifier !== undefined && data.verifier !== null) {
    if (!isObject(data.verifier)) bad('verifier', 'expects a mapping (VerifierConfig)');
    const v = data.verifier as Json;
    verifierEnv = env('verifier.env', v.env);
    if (bool('verifier.disable', v.disable)) options.disableVerification = true;
    unsupported(
      'verifier.override_timeout_sec',
      v.override_timeout_sec,
      'a verifier timeout (use --verifier-timeout-multiplier)',
    );
    unsupported('verifier.max_timeout_sec', v.max_timeout_sec, 'a verifier timeout cap');
    unsupported('verifier.import_path', v.import_path, 'a custom verifier class');
    unsupported('verifier.kwargs', v.kwargs, 'verifier kwargs');
  }

  // Agents: one agent, with one model or several (Harbor's one AgentConfig per `-m`).
  if (data.agents !== undefined && data.agents !== null) {
    if (!Array.isArray(data.agents)) bad('agents', 'expects a list of agents (AgentConfig)');
    const agents = data.agents as unknown[];
    const models: string[] = [];
    for (const [i, a] of agents.entries()) {
      const field = `agents[${i}]`;
      if (!isObject(a)) bad(field, 'expects a mapping (AgentConfig)');
      if (!isObject(a)) continue;
      unsupported(`${field}.import_path`, a.import_path, 'a custom agent class');
      const name = str(`${field}.name`, a.name) ?? 'oracle';
      if (options.agent !== undefined && options.agent !== name)
        bad(field, `berth runs one agent per job (${options.agent} and ${name}): run a job per agent`);
      options.agent = name;
      const model = str(`${field}.model_name`, a.model_name);
      if (model !== undefined) models.push(model);
      if (i > 0) continue;
      const kwargs = isObject(a.kwargs) ? a.kwargs : {};
      const ak = Object.entries(kwargs).map(
        ([k, x]) => `${k}=${typeof x === 'string' ? x : JSON.stringify(x)}`,
      );
      if (ak.length > 0) options.ak = ak;
      const agentEnv = Object.entries(env(`${field}.env`, a.env)).map(([k, x]) => `${k}=${x}`);
      if (agentEnv.length > 0) options.ae = agentEnv;
      options.agentTimeout = num(`${field}.override_timeout_sec`, a.override_timeout_sec);
      options.agentSetupTimeout = num(`${field}.override_setup_timeout_sec`, a.override_setup_timeout_sec);
      unsupported(`${field}.skills`, a.skills, 'skills (a task gives them with skills_dir)');
      unsupported(
        `${field}.mcp_servers`,
        a.mcp_servers,
        'MCP servers (a task gives them in [[environment.mcp_servers]])',
      );
      unsupported(`${field}.max_timeout_sec`, a.max_timeout_sec, 'an agent timeout cap');
    }
    if (models.length > 0) options.model = models;
  }

  // What to run: one dataset folder or file (with its filters), or one task.
  const datasets = data.datasets ?? [];
  const tasks = data.tasks ?? [];
  if (!Array.isArray(datasets)) bad('datasets', 'expects a list (DatasetConfig)');
  if (!Array.isArray(tasks)) bad('tasks', 'expects a list (TaskConfig)');
  const selections = (datasets as unknown[]).length + (tasks as unknown[]).length;
  if (selections > 1)
    bad(
      (datasets as unknown[]).length > 1 ? 'datasets' : 'tasks',
      'berth runs one dataset or task per job: give the folder holding them, or run a job each',
    );
  const d = (datasets as unknown[])[0];
  if (d !== undefined) {
    if (!isObject(d)) bad('datasets[0]', 'expects a mapping (DatasetConfig)');
    const ds = d as Json;
    if (ds.path == null) {
      // A registry dataset: berth's -d NAME@VERSION with --registry-path / --registry-url.
      const name = str('datasets[0].name', ds.name) ?? bad('datasets[0]', 'needs a path or a name');
      const version = str('datasets[0].version', ds.version) ?? str('datasets[0].ref', ds.ref);
      options.dataset = version ? `${name}@${version}` : name;
      const registryPath = str('datasets[0].registry_path', ds.registry_path);
      if (registryPath !== undefined) options.registryPath = resolve(registryPath);
      const registryUrl = str('datasets[0].registry_url', ds.registry_url);
      if (registryUrl !== undefined) options.registryUrl = registryUrl;
    } else options.path = resolve(str('datasets[0].path', ds.path) as string);
    options.include = strings('datasets[0].task_names', ds.task_names);
    options.exclude = strings('datasets[0].exclude_task_names', ds.exclude_task_names);
    options.limit = num('datasets[0].n_tasks', ds.n_tasks, true);
  }
  const t = (tasks as unknown[])[0];
  if (t !== undefined) {
    if (!isObject(t)) bad('tasks[0]', 'expects a mapping (TaskConfig)');
    const ts = t as Json;
    if (ts.path == null)
      bad('tasks[0].name', 'registry tasks (-t org/name) are not yet supported: give a path');
    unsupported('tasks[0].git_url', ts.git_url, 'git tasks');
    options.path = resolve(str('tasks[0].path', ts.path) as string);
  }

  const artifacts: ArtifactRequest[] = [];
  if (data.artifacts !== undefined && data.artifacts !== null) {
    if (!Array.isArray(data.artifacts)) bad('artifacts', 'expects a list of paths or {source, destination}');
    for (const [i, a] of (data.artifacts as unknown[]).entries()) {
      if (typeof a === 'string' && a !== '') artifacts.push(a);
      else if (isObject(a) && typeof a.source === 'string' && a.source !== '')
        artifacts.push({
          source: a.source,
          ...(typeof a.destination === 'string' ? { destination: a.destination } : {}),
          ...(Array.isArray(a.exclude) ? { exclude: a.exclude.map(String) } : {}),
        });
      else bad(`artifacts[${i}]`, 'expects a path or {source, destination, exclude}');
    }
  }
  const metrics = data.metrics;
  if (
    Array.isArray(metrics) &&
    metrics.some((m) => !isObject(m) || (m.type !== undefined && m.type !== 'mean'))
  )
    bad('metrics', "berth computes Harbor's default metric (mean) only");
  unsupported('plugins', data.plugins, 'job plugins');
  unsupported('extra_instruction_paths', data.extra_instruction_paths, 'extra instruction files');
  return { options, retry, artifacts, verifierEnv };
}
