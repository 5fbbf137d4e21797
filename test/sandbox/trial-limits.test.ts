/**
 * A resource limit hit in a phase of a local trial is that phase's error (src/trials/limit-errors.ts):
 * bounded fork and memory bombs in the dataset's install, the agent's set-up, the agent (the
 * `command` agent and a patch agent's tests) and the verifier, each recorded with the phase's
 * error type, never a generic engine error; the trial's `berth.limits` says how limits were enforced.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { CommandAgent } from '../../src/agents/command.ts';
import { OracleAgent } from '../../src/agents/oracle.ts';
import { installCacheKey, installsDir } from '../../src/environments/local/install-cache.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { cappedFolderSupport } from '../../src/sandbox/capped-folder.ts';
import { cgroupSupport } from '../../src/sandbox/cgroup.ts';
import { isRoot } from '../../src/sandbox/identity.ts';
import { type LimitRequest, MiB } from '../../src/sandbox/limits.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { SwebenchVerifier } from '../../src/verifiers/swebench.ts';
import { FORK_BOMB, MEMORY_HOG } from '../helpers/bombs.ts';
import { statusLinesParser } from '../helpers/status-lines-parser.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { shellTask } from '../trials/shell-task.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const SMALL: LimitRequest = { processes: 64, memoryBytes: 128 * MiB, writableBytes: 64 * MiB };
const verifier = new SwebenchVerifier({ parsers: [statusLinesParser] });
const provider = new LocalEnvironmentProvider({ limits: SMALL });

async function trial(task: Task, agent: Agent): Promise<TrialResult> {
  const trialDir = join(await temp.make('berth-limits-trial-'), 'trial');
  return runTrial({
    task,
    agent,
    attempt: 1,
    trialName: 't__1',
    trialDir,
    jobId: 'limits',
    source: 'inline',
    providers: [provider],
    verifiers: [verifier],
  });
}

const needsCgroups = () => !cgroupSupport().version;

describe.each([
  { bomb: 'fork bomb', command: FORK_BOMB, limit: 'ProcessLimitError' },
  { bomb: 'memory hog', command: MEMORY_HOG, limit: 'OutOfMemoryError' },
])('a $bomb in each phase of a local trial', ({ command, limit }) => {
  it('install: EnvironmentSetup error', async (ctx) => {
    if (needsCgroups()) ctx.skip();
    const task = await shellTask();
    if (task.environment.kind === 'local') task.environment.install = command;
    const result = await trial(task, new OracleAgent());
    expect(result.berth.status).toBe('error');
    expect(result.exception_info?.exception_type).toBe(`EnvironmentSetup${limit}`);
    expect(result.exception_info?.exception_message).toContain('environment setup');
  });

  it('agent set-up: AgentSetup error', async (ctx) => {
    if (needsCgroups()) ctx.skip();
    const agent = new CommandAgent({ command: 'true', setup: command });
    const result = await trial(await shellTask(), agent);
    expect(result.exception_info?.exception_type).toBe(`AgentSetup${limit}`);
    expect(result.verifier).toBeNull();
  });

  it('agent: Agent error, whatever the agent kind', async (ctx) => {
    if (needsCgroups()) ctx.skip();
    const result = await trial(await shellTask(), new CommandAgent({ command }));
    expect(result.berth.status).toBe('error');
    expect(result.exception_info?.exception_type).toBe(`Agent${limit}`);
    expect(result.verifier).toBeNull();
  });

  it('verifier: Verifier error, no verdict', async (ctx) => {
    if (needsCgroups()) ctx.skip();
    const result = await trial(
      await shellTask({ testCommand: `${command}; bash {tests}` }),
      new OracleAgent(),
    );
    expect(result.berth.status).toBe('error');
    expect(result.berth.resolved).toBe(false);
    expect(result.exception_info?.exception_type).toBe(`Verifier${limit}`);
    expect(result.exception_info?.exception_traceback).not.toMatch(/at .*trial\.ts/);
  });
});

describe('a trial records its limits', () => {
  it('berth.limits holds the values and what enforced them', async () => {
    const result = await trial(await shellTask(), new OracleAgent());
    expect(result.berth.status).toBe('resolved');
    expect(result.berth.limits).toMatchObject({
      processes: 64,
      memory_bytes: 128 * MiB,
      disk_bytes: 64 * MiB,
    });
    expect(result.berth.limits?.enforced_by.cpu_time).toBe('rlimit');
  });
});

describe('a trial started from the install cache (its repository an overlay on the entry)', () => {
  it('writes into node_modules count against the trial folder cap: a filler gets AgentDiskLimitError', async (ctx) => {
    if (!isRoot || (await cappedFolderSupport()) !== undefined)
      ctx.skip('needs root and capped trial folders');
    const saved = process.env.BERTH_CACHE_DIR;
    process.env.BERTH_CACHE_DIR = await temp.make('berth-limits-cache-');
    try {
      const task = await shellTask();
      if (task.environment.kind !== 'local') throw new Error('shellTask is local');
      task.environment.install = `mkdir -p node_modules/x && echo installed > node_modules/x/f # ${randomUUID()}`;
      const first = await trial(task, new OracleAgent());
      expect(first.berth.status).toBe('resolved');
      // 6 x 32 MiB into an installed package's folder, past the 64 MiB cap.
      const filler = new CommandAgent({
        command:
          'for i in 1 2 3 4 5 6; do head -c 33554432 /dev/zero > node_modules/x/fill.$i || break; done',
      });
      const filled = await trial(task, filler);
      expect(filled.berth.install_cache).toEqual({ hit: true, method: 'overlay' });
      expect(filled.berth.status).toBe('error');
      expect(filled.exception_info?.exception_type).toBe('AgentDiskLimitError');
      // Nothing of it reached the entry, and the next trial is graded as the first.
      const entry = join(
        installsDir(),
        installCacheKey(task.environment) as string,
        'repo',
        'node_modules',
        'x',
      );
      expect(await readFile(join(entry, 'f'), 'utf8')).toBe('installed\n');
      const after = await trial(task, new OracleAgent());
      expect(after.berth.status).toBe('resolved');
    } finally {
      if (saved === undefined) delete process.env.BERTH_CACHE_DIR;
      else process.env.BERTH_CACHE_DIR = saved;
    }
  });
});
