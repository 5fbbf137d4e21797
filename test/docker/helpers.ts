/**
 * Helpers for tests against the real Docker engine: skip without an engine
 * unless BERTH_REQUIRE_DOCKER=1, the local base image, and a minimal run of
 * the trial phases (environment start, agent, verifier, stop).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, vi } from 'vitest';
import type { Agent, AgentContext, AgentResult } from '../../src/agents/agent.ts';
import { dockerAvailable } from '../../src/environments/docker/client.ts';
import { ImageMap } from '../../src/environments/docker/dockerfile.ts';
import {
  DockerEnvironmentProvider,
  type DockerProviderOptions,
} from '../../src/environments/docker/provider.ts';
import type { Environment } from '../../src/environments/environment.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { ExtendedTrialResult } from '../../src/trials/record.ts';
import { collectLogFolder } from '../../src/trials/staging.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import {
  fileSystemBefore,
  tamperingVerdict,
  verifierEnvironment,
} from '../../src/trials/verifier-environment.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import type { TamperFinding } from '../../src/verifiers/tampering/types.ts';
import type { VerifierResult } from '../../src/verifiers/verifier.ts';

// Real-engine tests build images and start containers on a shared 2-core machine: allow them time.
vi.setConfig({ testTimeout: 300_000 });

export const BASE_IMAGE = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
export const requireDocker = process.env.BERTH_REQUIRE_DOCKER === '1';
export const engine = await dockerAvailable();
/** True when Docker tests must be skipped (no engine and not required). */
export const skipDocker = !engine && !requireDocker;
if (skipDocker)
  console.warn('Docker tests skipped: no engine answers (set BERTH_REQUIRE_DOCKER=1 to make this a failure)');

export const JOB_ID = `test-${process.pid}`;
export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'harbor');

/** Image map for the fixtures: their Debian FROM images run on the local base. */
export function fixtureImageMap(): ImageMap {
  return new ImageMap({ 'debian:bookworm-slim': BASE_IMAGE });
}

/**
 * A SWE-bench-style image: a committed repository at /testbed on the local base whose `calc.py`
 * has `add()` subtracting (the bug the rows of these tests fix).
 */
export const CALC_DOCKERFILE = [
  `FROM ${BASE_IMAGE}`,
  'RUN mkdir -p /testbed && cd /testbed && git init -q && git config user.email t@example.invalid && git config user.name t \\',
  "  && echo 'def add(a, b):' > calc.py && echo '    return a - b' >> calc.py \\",
  '  && git add -A && git commit -qm base',
  'WORKDIR /testbed',
  '',
].join('\n');

const madeDirs: string[] = [];
// Registered while the importing test file is collected: its folders go when that file ends.
afterAll(() => {
  for (const dir of madeDirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A temporary folder, removed when the test file that asked for it ends. */
export function tempDir(prefix = 'berth-docker-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

/**
 * A minimal two-step Harbor task (`mean`, steps `one` and `two`, Debian, workdir /app, 60 s
 * timeouts) in a temporary folder. `files` are written over it by path (mode 0755), e.g.
 * `steps/two/tests/test.sh` or `steps/two/workdir/setup.sh`; each step's test.sh writes reward 1
 * unless given.
 */
export function twoStepTask(files: Record<string, string>): string {
  const dir = tempDir('berth-engine-steps-');
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: 0o755 });
  };
  write(
    'task.toml',
    [
      'schema_version = "1.3"',
      'multi_step_reward_strategy = "mean"',
      '[agent]',
      'timeout_sec = 60.0',
      '[verifier]',
      'timeout_sec = 60.0',
      '[environment]',
      'workdir = "/app"',
      '[[steps]]',
      'name = "one"',
      '[[steps]]',
      'name = "two"',
      '',
    ].join('\n'),
  );
  write('environment/Dockerfile', 'FROM debian:bookworm-slim\nRUN mkdir -p /app\nWORKDIR /app\n');
  for (const step of ['one', 'two']) {
    write(`steps/${step}/instruction.md`, `Step ${step}.\n`);
    write(`steps/${step}/tests/test.sh`, '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n');
  }
  for (const [path, text] of Object.entries(files)) write(path, text);
  return dir;
}

/**
 * One trial of a Harbor task through the trial engine on Docker (the fixtures' images on the local
 * base, Harbor's verifier), in a temporary folder named with `prefix`.
 */
export async function harborTrial(
  task: Task,
  agent: Agent,
  prefix: string,
): Promise<{ r: ExtendedTrialResult; dir: string }> {
  const dir = tempDir(prefix);
  const r = await runTrialWith({
    task,
    agent,
    attempt: 1,
    trialName: 't',
    trialDir: dir,
    jobId: JOB_ID,
    source: 'test',
    providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
    verifiers: [new HarborVerifier()],
  });
  return { r, dir };
}

/** An agent that runs a shell script in the environment (hostile agents in fail-closed tests). */
export class ShellAgent implements Agent {
  readonly info = { name: 'shell', version: 'test' };
  output = '';
  constructor(private readonly script: string) {}
  async run(context: AgentContext): Promise<AgentResult> {
    const r = await context.environment.exec(this.script, { timeoutSec: context.timeoutSec ?? 60 });
    this.output = r.output;
    return { metadata: { exit_code: r.exitCode, timed_out: r.timedOut, oom_killed: r.oomKilled ?? false } };
  }
}

export interface PhaseRun {
  verdict: VerifierResult;
  agentError?: Error;
  trialDir: string;
  /** What the agent changed outside the work folder (the verifier ran in a fresh environment). */
  tampering?: TamperFinding;
}

/**
 * Runs the phases of one trial the way the trial engine does (start, agent, the agent's logs
 * copied out, the verifier's environment made safe, verify, stop).
 */
export async function runPhases(
  task: Task,
  agent: Agent,
  options: DockerProviderOptions = {},
): Promise<PhaseRun> {
  const provider = new DockerEnvironmentProvider({ imageMap: fixtureImageMap(), ...options });
  const trialDir = tempDir('berth-trial-');
  const environment = await provider.start({ task, jobId: JOB_ID, trialDir });
  let fresh: Environment | undefined;
  try {
    const before = await fileSystemBefore(environment);
    let agentError: Error | undefined;
    try {
      await agent.run({
        task,
        environment,
        attempt: 1,
        logDir: join(trialDir, 'agent'),
        timeoutSec: task.agentTimeoutSec,
      });
    } catch (error) {
      agentError = error as Error;
    }
    // As the engine does: the agent's log folder is copied out as data after the agent ...
    await collectLogFolder(environment, 'agent', trialDir);
    // ... and the verifier gets an environment with no process of the agent (or a fresh one).
    const chosen = await verifierEnvironment(environment, {
      before,
      start: () => provider.start({ task, jobId: JOB_ID, trialDir }),
      keepOriginal: false,
    });
    if ('failClosed' in chosen) return { verdict: tamperingVerdict(chosen.failClosed), agentError, trialDir };
    fresh = chosen.fresh;
    const timeoutSec = task.verifier.kind === 'harbor' ? task.verifier.timeoutSec : 60;
    const verdict = await new HarborVerifier().verify({
      task,
      environment: chosen.environment,
      agentResult: {},
      trialDir,
      timeoutSec,
    });
    if (chosen.killed > 0)
      verdict.details = { ...(verdict.details ?? {}), killed_agent_processes: chosen.killed };
    return { verdict, agentError, trialDir, ...(chosen.finding ? { tampering: chosen.finding } : {}) };
  } finally {
    await fresh?.stop();
    await environment.stop();
  }
}
