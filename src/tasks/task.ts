/**
 * Stage 1 of the pipeline: load tasks. A loader turns a dataset on disk
 * (SWE-bench rows, Harbor task folders, ...) into `Task` objects. A task says
 * what environment it needs, what the agent is told, how the oracle solves it
 * and how it is verified; the trial engine (src/trials/) does the rest.
 */

/** Provenance of a task, carried into every trial result (Harbor's `[metadata.source]`). */
export interface TaskSource {
  repository?: string;
  pr?: string;
  license?: string;
  [key: string]: unknown;
}

/** The repository snapshot a local environment materialises (SWE-bench DockerLess rows). */
export interface RepositorySnapshot {
  /** Text files: path -> UTF-8 content (the seed's `dockerless.files`). */
  files: Record<string, string>;
  /** Binary files: path -> base64 content (berth extension `dockerless.binary_files`). */
  binaryFiles?: Record<string, string>;
  /** Symbolic links: path -> link target (berth extension `dockerless.symlinks`). */
  symlinks?: Record<string, string>;
  /** Executable files (mode 755), paths (berth extension `dockerless.executables`). */
  executables?: string[];
}

/** What environment a task runs in. New kinds are added as union members. */
export type EnvironmentSpec =
  | {
      kind: 'local';
      /** Files of the repository at the base commit, when the row carries them. */
      snapshot?: RepositorySnapshot;
      /**
       * A host folder holding the repository's files at the base commit, copied as they are
       * (links kept as links, never followed): the multilingual demo's `environment/repo/`.
       */
      folder?: string;
      /** `owner/name`, used to find a git mirror under `--repos` when there is no snapshot. */
      repo?: string;
      baseCommit?: string;
      /** Set-up command run before the agent, with the network allowed (`dockerless.install`). */
      install?: string;
    }
  | {
      kind: 'docker';
      /** Image to run, or undefined when `dockerfileDir` is built. */
      image?: string;
      /** Build context holding a Dockerfile (Harbor's `environment/`). */
      dockerfileDir?: string;
      /** Path of a docker-compose file whose `main` service names the image to build. */
      composeFile?: string;
      /** Working directory inside the container. */
      workdir?: string;
      cpus?: number;
      /** Memory limit in megabytes. */
      memoryMb?: number;
      /** Storage limit in megabytes. */
      storageMb?: number;
      /** Build timeout in seconds. */
      buildTimeoutSec?: number;
      /** GPUs the task needs (Harbor's `gpus`); refused on an engine without GPUs. */
      gpus?: number;
      /** GPU models the task accepts, any one of them (Harbor's `gpu_types`). */
      gpuTypes?: string[];
      /** A TPU slice (Harbor's `[environment.tpu]`); no Docker engine has one. */
      tpu?: { type: string; topology: string };
      /**
       * Variables of every command in the environment (Harbor's `[environment] env`), as written:
       * `${VAR}` / `${VAR:-default}` are resolved from the host when the trial starts.
       */
      env?: Record<string, string>;
      /**
       * A `docker save` archive holding the image the task builds on (the multilingual demo's
       * `tar_path`, resolved in `--images-dir`, default `<datasetDir>/sample_images`): loaded
       * when that image is missing (src/environments/docker/image-archives.ts).
       */
      imageArchive?: { tarPath: string; datasetDir: string };
      network: NetworkPolicy;
      [key: string]: unknown;
    };

/**
 * An MCP server a task offers its agent (Harbor's `[[environment.mcp_servers]]`): a URL the
 * agent reaches from inside the environment (`sse`, `streamable-http`; often a sidecar service
 * of the task's docker-compose file), or a command the agent starts itself (`stdio`).
 */
export interface McpServer {
  name: string;
  transport: 'stdio' | 'sse' | 'streamable-http';
  url?: string;
  command?: string;
  args: string[];
}

/** Network access of a phase (Harbor's `network_mode`). */
export type NetworkPolicy =
  | { mode: 'public' }
  | { mode: 'no-network' }
  | { mode: 'allowlist'; allowedHosts: string[] };

/** How the oracle solves a task. */
export type SolutionSpec =
  | { kind: 'patch'; patch: string }
  | {
      kind: 'script' /** host folder copied to /solution; runs solve.sh */;
      dir: string;
      env?: Record<string, string>;
    }
  | { kind: 'none' };

/** How a task is verified. Each kind has a `Verifier` in src/verifiers/. */
export type VerifierSpec =
  | {
      kind: 'swebench';
      testPatch: string;
      /** Shell command with `{tests}` replaced by `testFiles` joined by spaces. */
      testCommand: string;
      testFiles: string[];
      failToPass: string[];
      passToPass: string[];
      /** Parser registry name; undefined means detect from the log. */
      parser?: string;
      /** Timeout of the test run in seconds. */
      timeoutSec: number;
    }
  | {
      /** The multilingual demo's grading (src/tasks/multilingual/): split the diff, test patch, named parser. */
      kind: 'multilingual';
      /** Commit the agent started from; the agent's diff is taken against it. */
      baseCommit: string;
      testPatch: string;
      /** Shell command run in the repository after the test patch. */
      testCommand: string;
      /** Parser registry name from `tests/config.json` (`log_parser`). */
      parser: string;
      failToPass: string[];
      passToPass: string[];
      /** Informational: reported, never gating. */
      passToFail: string[];
      failToFail: string[];
      timeoutSec: number;
    }
  | {
      kind: 'harbor';
      /** Host folder copied to /tests. */
      testsDir: string;
      timeoutSec: number;
      env?: Record<string, string>;
      /** User test.sh runs as (Harbor's `[verifier] user`); default root. */
      user?: string | number;
      /** The environment's image owns `/tests` (a separate verifier, Harbor's `skip_tests_upload`). */
      testsInImage?: boolean;
      /**
       * A Kotlin Benchmark `expected_tests.json` (host path): the reward is berth's verdict on the
       * JUnit reports, not what test.sh wrote (src/verifiers/kotlin-harbor.ts).
       */
      expectedTests?: string;
      [key: string]: unknown;
    };

/** One task, whatever format it was loaded from. */
export interface Task {
  /** Unique name within a dataset: the SWE-bench `instance_id` or the Harbor task folder name. */
  name: string;
  /** The format it was loaded from, e.g. `swebench`, `harbor`. */
  format: string;
  /** Where it was read from, for messages: a file and, for row files, the 1-based line. */
  origin: { file: string; line?: number };
  /** What the agent is told (problem statement or instruction.md, canary lines removed). */
  instruction: string;
  environment: EnvironmentSpec;
  solution: SolutionSpec;
  verifier: VerifierSpec;
  /** Agent phase timeout in seconds. */
  agentTimeoutSec?: number;
  /**
   * Per-phase network overrides (Harbor's `[agent] network_mode` / `[verifier] network_mode`);
   * a phase without one uses the environment's policy. See src/environments/docker/egress/.
   */
  phaseNetwork?: { agent?: NetworkPolicy; verifier?: NetworkPolicy };
  /** MCP servers the agent is given (agents that speak MCP write them into their configuration). */
  mcpServers?: McpServer[];
  /** Folder inside the environment whose skills are copied where the agent reads skills. */
  skillsDir?: string;
  source?: TaskSource;
  /** Every other field of the input, kept as it was. */
  metadata: Record<string, unknown>;
}
