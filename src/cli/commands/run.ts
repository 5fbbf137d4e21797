/**
 * `berth run`: evaluate an agent on a dataset. See docs/running-swebench.md.
 * Exit codes: 0 the run completed (whatever the verdicts), 1 internal error,
 * 2 bad usage or bad input (before any trial starts), 130 stopped by Ctrl-C (SIGINT),
 * 143 stopped by SIGTERM.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { oneOf } from '../choices.ts';
import { installInterruptHandler } from '../interrupt.ts';
import type { ModelFlags } from '../run-models.ts';
import type { RegisterCommand } from './index.ts';

/** The options of `berth run`; the model ones (`-m`, limits, prices, cache) are `ModelFlags`. */
export interface RunCommandOptions extends ModelFlags {
  /** `-p`; required unless the `-c` job configuration names a dataset or task. */
  path?: string;
  agent: string;
  predictions?: string;
  agentCommand?: string;
  agentSetup?: string;
  agentSetupTimeout?: string;
  agentEnv?: string[];
  agentMount?: string[];
  agentVersion?: string;
  ak?: string[];
  ae?: string[];
  agentTimeout?: string;
  attempts: string;
  concurrency: string;
  jobsDir: string;
  jobName?: string;
  include?: string[];
  exclude?: string[];
  limit?: string;
  json?: boolean;
  /** Reporter names (`--reporter`, repeatable); default `default`. */
  reporter?: string[];
  repos?: string;
  timeoutMultiplier?: string;
  keepEnvironments?: boolean;
  agentTimeoutMultiplier?: string;
  verifierTimeoutMultiplier?: string;
  environmentBuildTimeoutMultiplier?: string;
  imageMap?: string[];
  config?: string;
  rebuild?: boolean;
  imagesDir?: string;
  /** Harbor's registries (src/tasks/harbor/registry-dataset.ts). */
  dataset?: string;
  task?: string;
  registryPath?: string;
  registryUrl?: string;
  allowEnvSecrets?: boolean;
  /**
   * Harbor's `-e/--env`: `docker` or `local` (SWE-bench rows: the harness's instance image, or
   * a snapshot / `--repos` mirror); default: as each task says. Harbor's cloud environments are refused.
   */
  env?: string;
  /**
   * Whose verdict counts: `default` (berth's rules), `swebench` (SWE-bench rows: the harness's)
   * or `harbor` (Harbor tasks: verified in the agent's environment as Harbor does).
   */
  rules?: 'default' | 'swebench' | 'harbor';
  /** Harbor's spellings of berth's options (`--n-attempts` for `--attempts`...), hidden aliases. */
  nAttempts?: string;
  nConcurrent?: string;
  includeTaskName?: string[];
  excludeTaskName?: string[];
  nTasks?: string;
  /** berth's own settings file (`[docker.image_map]`, `docker.pids_limit`), formerly `--config`. */
  settings?: string;
  /** Harbor's `--ve/--verifier-env K=V` (repeatable). */
  ve?: string[];
  verifierEnv?: string[];
  silent?: boolean;
  enableVerification?: boolean;
  /** Harbor's `-q/--quiet/--silent`: no line per trial, the summary only. */
  quiet?: boolean;
  /** Harbor's `--debug`: every event of the job as a log line on standard error. */
  debug?: boolean;
  /** Harbor's `-r/--max-retries`, `--retry-include`, `--retry-exclude` (exception type names). */
  maxRetries?: string;
  retryInclude?: string[];
  retryExclude?: string[];
  /** Harbor's `--force-build/--no-force-build` (`--rebuild` is berth's older name). */
  forceBuild?: boolean;
  /** Harbor's `--delete/--no-delete`. */
  delete?: boolean;
  agentSetupTimeoutMultiplier?: string;
  /** Harbor's `--disable-verification/--enable-verification`. */
  disableVerification?: boolean;
  /** Harbor's `--artifact PATH` (repeatable): collected from every trial's environment after the agent. */
  artifact?: string[];
  /** Harbor's resource overrides, replacing each task's `[environment]` value (docs/security.md). */
  overrideCpus?: string;
  overrideMemoryMb?: string;
  overrideStorageMb?: string;
  /** Run the trials on workers through this Redis (`redis://` / `rediss://`; docs/scale-out.md). */
  queue?: string;
  /** CA certificate (PEM) of a `rediss://` queue. */
  queueCa?: string;
  /** Cap of one blob on the queue, in MiB. */
  maxBlobMb?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const registerRun: RegisterCommand = (program: Command) => {
  program
    .command('run')
    .description('Run an agent on a dataset (SWE-bench rows, DockerLess rows, ...) and grade every trial.')
    .option(
      '-p, --path <dataset>',
      'SWE-bench file (JSON list, JSON object keyed by id, JSONL), a folder of them, or a Harbor task or dataset folder (required unless -c names one)',
    )
    .option(
      '-d, --dataset <name@version>',
      "a dataset of Harbor's registry file (--registry-path), its tasks fetched with git from local clones or --repos mirrors (offline)",
    )
    .option(
      '-t, --task <org/name[@ref]>',
      "a task of Harbor's package registry (refused: it is on the network)",
    )
    .option('--registry-path <file>', "Harbor's registry.json (a local copy) for -d")
    .option('--registry-url <url>', 'registry for -d: file:// only (berth does not download registries)')
    .option(
      '-a, --agent <name>',
      "agent: oracle, nop, predictions, command, deckhand (berth's own coding agent; needs -m), claude-code, codex, gemini-cli, opencode, qwen-code",
      'oracle',
    )
    .option('--predictions <file>', 'SWE-bench predictions file (JSON or JSONL) for -a predictions')
    .option(
      '--agent-command <cmd>',
      'shell command run as the agent in the task folder (-a command; instruction file in $BERTH_INSTRUCTION_FILE)',
    )
    .option('--agent-setup <cmd>', 'set-up command run once per trial before the agent (-a command)')
    .option('--agent-setup-timeout <sec>', 'limit of --agent-setup in seconds (default 360)')
    .option(
      '--agent-env <K=V>',
      'variable for the agent command (repeatable; NAME alone copies it from this environment)',
      collect,
    )
    .option(
      '--agent-mount <dir>',
      'host folder the agent command may read in the local sandbox (repeatable; -a command)',
      collect,
    )
    .option(
      '--agent-version <v>',
      'installed agents: the version to install (exact, or a tag/range resolved by the registry)',
    )
    .option(
      '--ak <key=value>',
      "one of the agent's own options, e.g. max_turns=30 (repeatable; installed agents: docs/agents.md, deckhand: docs/models.md)",
      collect,
    )
    .option('--ae <NAME=VALUE>', 'variable for the agent (repeatable; same as --agent-env)', collect)
    .option('--agent-timeout <sec>', "agent timeout in seconds, replacing the task's")
    .option(
      '-m, --model <provider/name>',
      "model, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5, openrouter/anthropic/claude-opus-4.6 (repeatable: one set of trials per model); called through berth's model gateway (docs/models.md)",
      collect,
    )
    .option(
      '--model-base-url <url>',
      "base URL of the model API, e.g. an OpenAI-compatible server http://127.0.0.1:8000/v1 (default: the provider's, or its usual variable)",
    )
    .option(
      '--env-file <file>',
      'dotenv file with model keys (OPENAI_API_KEY=..., ...), read over the environment',
    )
    .option('--model-max-calls <n>', 'model calls (turns) a trial may make')
    .option('--model-max-tokens <n>', 'input plus output tokens a trial may use')
    .option('--model-max-cost <usd>', 'USD a trial may spend on its model')
    .option(
      '--model-max-in-flight <n>',
      'model calls of a trial under way at once; more wait their turn (default 4)',
    )
    .option('--model-budget <usd>', 'USD the whole job may spend; then no further trial starts')
    .option(
      '--model-timeout <sec>',
      'limit of one model request in seconds, streaming included (default 600)',
    )
    .option('--model-prices <file>', "JSON price file over berth's table (docs/models.md)")
    .option(
      '--model-cache',
      'answer repeated model requests from the response cache (berth clean --cache removes it)',
    )
    .option('-k, --attempts <n>', 'attempts per task (Harbor: -k/--n-attempts)', '1')
    .option('-n, --concurrency <n>', 'trials run at once (Harbor: -n/--n-concurrent; berth default 1)', '1')
    .option('-o, --jobs-dir <dir>', 'folder of job folders', 'jobs')
    .option(
      '--job-name <name>',
      'job folder name; an existing job of that name is resumed (default: the date and time)',
    )
    .option(
      '-c, --config <file>',
      "Harbor's job configuration (JobConfig, YAML or JSON); flags given beside it win",
    )
    .option(
      '-i, --include <glob>',
      'run only tasks whose name matches (repeatable; Harbor: --include-task-name)',
      collect,
    )
    .option(
      '-x, --exclude <glob>',
      'skip tasks whose name matches (repeatable; Harbor: --exclude-task-name)',
      collect,
    )
    .option('-l, --limit <n>', 'run at most N tasks, after -i/-x (Harbor: -l/--n-tasks)')
    .option('-q, --quiet', 'no line per trial: the summary only (Harbor: -q/--quiet/--silent)')
    .option('--debug', 'print every event of the job (phases, commands, model calls) as a log line on stderr')
    .option('-r, --max-retries <n>', 'run a trial again up to N times after an exception (default 0)')
    .option(
      '--retry-include <exception>',
      'retry only these exception types (repeatable; default: every type not excluded)',
      collect,
    )
    .option(
      '--retry-exclude <exception>',
      'never retry these exception types (repeatable; default AgentTimeoutError, VerifierTimeoutError, RewardFileNotFoundError, RewardFileEmptyError, VerifierOutputParseError, AgentWorkError)',
      collect,
    )
    .option('--json', 'write one JSON document (docs/run-report.schema.json) to stdout')
    .option(
      '--reporter <name>',
      'reporter: default (table on a terminal, else a line per trial), ci (a line per trial), json (repeatable)',
      collect,
    )
    .option('--repos <dir>', 'folder of git mirrors (owner__repo or owner/repo) for rows without a snapshot')
    .addOption(new Option('--timeout-multiplier <x>', 'multiply every timeout').default('1'))
    .option(
      '--agent-timeout-multiplier <x>',
      'multiply the agent timeout (replaces --timeout-multiplier for it)',
    )
    .option('--verifier-timeout-multiplier <x>', 'multiply the verifier timeout')
    .option(
      '--agent-setup-timeout-multiplier <x>',
      'multiply the agent set-up timeout (installed agents, --agent-setup)',
    )
    .option('--environment-build-timeout-multiplier <x>', 'multiply the Docker build timeout')
    .option(
      '--ve <NAME=VALUE>',
      "variable for the verifier (repeatable; also --verifier-env), over the task's [verifier] env",
      collect,
    )
    .addOption(new Option('--verifier-env <NAME=VALUE>').hideHelp().argParser(collect))
    .option('--disable-verification', 'run the agent only: no verifier, no reward')
    .addOption(new Option('--enable-verification', 'verify every trial (the default)').hideHelp())
    .option(
      '--artifact <path>',
      "a path collected from every trial's environment after the agent, into <trial>/artifacts (repeatable)",
      collect,
    )
    .option(
      '--image-map <FROM=TO>',
      'Docker: use a local image instead of FROM (repeatable; FROM may be *)',
      collect,
    )
    .option(
      '--settings <file>',
      "berth's settings file (TOML or JSON): [docker.image_map], docker.pids_limit",
    )
    .option('--override-cpus <n>', "CPU cores of every trial, replacing the task's cpus")
    .option(
      '--override-memory-mb <mb>',
      "memory of every trial's commands in MiB, replacing the task's memory_mb (default 4096)",
    )
    .option(
      '--override-storage-mb <mb>',
      "size of every trial's writable folders (and largest file) in MiB, replacing the task's storage_mb (default 10240)",
    )
    .option('--force-build', 'Docker: build images again even when cached (also --rebuild)')
    .addOption(new Option('--no-force-build', 'use cached images (the default)').hideHelp())
    .addOption(new Option('--rebuild', 'Docker: rebuild images even when cached').hideHelp())
    .option(
      '--no-delete',
      "keep each trial's environment folder (local); Docker containers are always removed",
    )
    .addOption(new Option('--delete', "remove each trial's environment after it (the default)").hideHelp())
    .option(
      '--images-dir <dir>',
      "Docker: folder of the tasks' image archives (the multilingual demo's tar_path), loaded when an image is missing (default: sample_images/ beside the tasks)",
    )
    .addOption(
      new Option(
        '-e, --env <kind>',
        "docker or local (SWE-bench rows: the row's or the harness's instance image, or a snapshot / --repos mirror); default: as each task says",
      ),
    )
    .addOption(
      oneOf(
        new Option(
          '--rules <name>',
          "default (berth's rules: stricter where the harness is wrong, and a pass the tamper checks refuse is not resolved); swebench (SWE-bench rows: the SWE-bench harness's verdict exactly; tamper findings still recorded); harbor (Harbor tasks: verify in the agent's container as Harbor does, with the agent's processes and its changes outside the work folder left in place; findings still recorded)",
        ),
        ['default', 'swebench', 'harbor'],
      ),
    )
    .option(
      '--allow-env-secrets',
      'Harbor: let [verifier] env / [solution] env templates copy secret-looking host variables (*KEY*, *TOKEN*, ...)',
    )
    .option(
      '--queue <url>',
      'run the trials on berth workers through this Redis: redis://[user:password@]host:port or rediss:// (docs/scale-out.md)',
    )
    .option(
      '--queue-ca <file>',
      'CA certificate (PEM) of a rediss:// queue whose certificate Node does not trust',
    )
    .option(
      '--max-blob-mb <mb>',
      'with --queue: largest blob (a task folder packed) in MiB (default 64, at most 512)',
    )
    .addOption(
      new Option('--keep-environments', 'keep the temporary repository folders (debugging)').hideHelp(),
    )
    // Harbor's long spellings of berth's options.
    .addOption(new Option('--n-attempts <n>').hideHelp())
    .addOption(new Option('--n-concurrent <n>').hideHelp())
    .addOption(new Option('--include-task-name <glob>').hideHelp().argParser(collect))
    .addOption(new Option('--exclude-task-name <glob>').hideHelp().argParser(collect))
    .addOption(new Option('--n-tasks <n>').hideHelp())
    .addOption(new Option('--silent').hideHelp())
    .action(async (options: RunCommandOptions, command: Command) => {
      // Installed first, before anything slow (loading the action, the dataset, the rows'
      // checks), so a Ctrl-C or SIGTERM at any point stops cleanly (src/cli/interrupt.ts).
      const interrupt = installInterruptHandler();
      try {
        const { runCommand } = await import('../run-action.ts');
        // The options given on the command line win over a -c job configuration's values.
        const given = new Set(Object.keys(options).filter((k) => command.getOptionValueSource(k) === 'cli'));
        process.exitCode = await runCommand(options, interrupt, given);
      } finally {
        interrupt.dispose();
      }
    });
};
