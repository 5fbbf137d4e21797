/**
 * The Harbor oracle (`src/harbor/agents/oracle.py`): copies the task's
 * `solution/` to `/solution` and runs `solve.sh` with the agent timeout,
 * output to `/logs/agent/oracle.txt`, env `DEBIAN_FRONTEND=noninteractive`
 * plus `[solution].env`. A non-zero exit is written to `agent/exit-code.txt`
 * and does not fail the trial: the verifier decides. A timeout throws
 * `AgentTimeoutError` (the trial records it and still verifies).
 */
import { join } from 'node:path';
import { tarPath } from '../environments/docker/tar.ts';
import { type ExecResult, logsPath } from '../environments/environment.ts';
import type { Task } from '../tasks/task.ts';
import { AgentTimeoutError } from '../trials/errors.ts';
import { limitError } from '../trials/limit-errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { shellQuote } from '../util/shell.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentInfo, AgentResult } from './agent.ts';

export { AgentTimeoutError };

export class ScriptOracleAgent implements Agent {
  readonly info: AgentInfo;

  /** @param patchOracle the oracle for tasks solved by a gold patch (SWE-bench rows), when this one also serves them */
  constructor(private readonly patchOracle?: Agent) {
    this.info = patchOracle?.info ?? { name: 'oracle', version: VERSION };
  }

  plannedPatch(task: Task): string | undefined {
    return task.solution.kind === 'script' ? undefined : this.patchOracle?.plannedPatch?.(task);
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const { task, environment } = context;
    const solution = task.solution;
    if (solution.kind !== 'script' && this.patchOracle) return this.patchOracle.run(context);
    if (solution.kind !== 'script')
      throw new Error(`task ${task.name} has no solution/solve.sh for the oracle`);
    const solve = `bash /solution/solve.sh > ${shellQuote(`${logsPath(environment, 'agent')}/oracle.txt`)} 2>&1`;
    const options = {
      ...(context.timeoutSec !== undefined ? { timeoutSec: context.timeoutSec } : {}),
      env: { DEBIAN_FRONTEND: 'noninteractive', ...(solution.env ?? {}) },
      ...(context.signal ? { signal: context.signal } : {}),
      // solve.sh is the oracle's one command: what it leaves running stops as it ends. (An image
      // without tar: the probe's exec stops what ran before solve.sh, the entrypoint's services.)
      ...(context.haltsOnReturn ? { haltOnExit: true } : {}),
    };
    // One command: unpack solution/ from standard input into /solution, then run solve.sh;
    // the separate upload is the fallback for images without tar.
    // Under `[agent] user` (src/trials/views.ts) solve.sh runs as that user, who cannot write
    // /solution: upload as root first (as Harbor does), then run.
    const asUser = environment.defaultExecUser !== undefined;
    let result = asUser
      ? ({
          exitCode: 98,
          output: 'berth:no-tar',
          timedOut: false,
          truncated: false,
          durationSec: 0,
        } as ExecResult)
      : await environment.exec(
          `command -v tar >/dev/null 2>&1 || { echo berth:no-tar; exit 98; }\nrm -rf /solution && tar -x -f - -C / || exit 99\n${solve}`,
          { ...options, input: await tarPath(solution.dir, 'solution') },
        );
    if (result.exitCode === 98 && result.output.includes('berth:no-tar')) {
      await environment.upload(solution.dir, '/solution');
      result = await environment.exec(solve, options);
    }
    const oom = result.oomKilled || (environment.newOomKills ? (await environment.newOomKills()) > 0 : false);
    if (result.exitCode !== 0 && !result.timedOut)
      await writeFileAtomic(join(context.logDir, 'exit-code.txt'), `${result.exitCode ?? result.signal}\n`);
    if (result.timedOut)
      throw new AgentTimeoutError(
        `solve.sh passed the agent timeout of ${context.timeoutSec} s and was killed`,
      );
    if (oom) throw limitError('agent', ['memory']);
    return { metadata: { exit_code: result.exitCode, duration_sec: result.durationSec } };
  }
}
