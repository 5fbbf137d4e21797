import type { Task } from '../tasks/task.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentResult } from './agent.ts';

/** Submits nothing (an empty patch): the negative control every task must fail. It names no model. */
export class NopAgent implements Agent {
  readonly info = { name: 'nop', version: VERSION };

  /** An empty patch for tasks graded on a patch; nothing at all for tasks where agents act in the environment (Harbor). */
  plannedPatch(task?: Task): string | undefined {
    return task && task.solution.kind === 'script' ? undefined : '';
  }

  async run(context?: AgentContext): Promise<AgentResult> {
    if (context && context.task.solution.kind === 'script') return {};
    return { patch: '' };
  }
}
