import type { Task } from '../tasks/task.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentResult } from './agent.ts';

/**
 * The oracle: submits the task's gold patch (SolutionSpec kind `patch`), as
 * SWE-bench's `--predictions_path gold` does (`model_name_or_path: "gold"`).
 * Tasks solved by a script (Harbor's solve.sh) are handled by the agent for that kind.
 */
export class OracleAgent implements Agent {
  readonly info = { name: 'oracle', version: VERSION, modelName: 'gold' };

  plannedPatch(task: Task): string | undefined {
    return task.solution.kind === 'patch' ? task.solution.patch : undefined;
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const solution = context.task.solution;
    if (solution.kind !== 'patch') {
      throw new Error(
        `the oracle agent has no gold patch for ${context.task.name} (solution kind ${solution.kind})`,
      );
    }
    return { patch: solution.patch, modelName: 'gold' };
  }
}
