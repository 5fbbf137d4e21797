import type { Task } from '../tasks/task.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentResult } from './agent.ts';
import { ScriptOracleAgent } from './script-oracle.ts';

/**
 * The oracle: submits the task's gold patch (SolutionSpec kind `patch`), as
 * SWE-bench's `--predictions_path gold` does. It names no model (Harbor's oracle has no
 * `model_info`), so its trials are Harbor's `oracle__<dataset>` eval.
 * A task solved by a script (Harbor's solution/solve.sh) is run by the script
 * oracle, so `-a oracle` works for both kinds.
 */
export class OracleAgent implements Agent {
  readonly info = { name: 'oracle', version: VERSION };

  plannedPatch(task: Task): string | undefined {
    return task.solution.kind === 'patch' ? task.solution.patch : undefined;
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const solution = context.task.solution;
    if (solution.kind === 'script') return new ScriptOracleAgent().run(context);
    if (solution.kind !== 'patch') {
      throw new Error(
        `the oracle agent has no gold patch for ${context.task.name} (solution kind ${solution.kind})`,
      );
    }
    return { patch: solution.patch };
  }
}
