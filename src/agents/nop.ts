import { VERSION } from '../version.ts';
import type { Agent, AgentResult } from './agent.ts';

/** Submits nothing (an empty patch): the negative control every task must fail. */
export class NopAgent implements Agent {
  readonly info = { name: 'nop', version: VERSION, modelName: 'nop' };

  plannedPatch(): string {
    return '';
  }

  async run(): Promise<AgentResult> {
    return { patch: '', modelName: 'nop' };
  }
}
