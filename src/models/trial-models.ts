/**
 * A trial's use of the job's model gateway, in the few calls the trial engine
 * makes: open a session when the trial starts (its token is the agent's key),
 * and when the agent is done close it, put its tokens and cost into
 * `agent_result` (Harbor's `n_input_tokens`, `n_cache_tokens`, `n_output_tokens`,
 * `cost_usd`), and build `agent/trajectory.json` from the gateway's records when
 * the agent wrote none. The calls themselves are recorded in the trial's
 * `model-calls.jsonl` (outside `agent/`, which agents in containers can write).
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { TrialEmit } from '../trials/events.ts';
import type { TrialResult } from '../trials/result.ts';
import type { GatewaySession, ModelGateway, SessionTotals, TrialLimits } from './gateway.ts';
import type { ModelTarget } from './providers.ts';
import { trajectoryFromRecords, writeTrajectory } from './trajectory.ts';

/** What a trial needs to call models: the job's gateway, the trial's model, its limits. */
export interface TrialModels {
  gateway: ModelGateway;
  target: ModelTarget;
  limits?: TrialLimits;
}

/** The trial's record of model calls, relative to the trial folder. */
export const MODEL_CALLS_FILE = 'model-calls.jsonl';

/** Harbor's token and cost fields of `agent_result`. */
export function usageFields(totals: SessionTotals): Record<string, number | null> {
  return {
    n_input_tokens: totals.usage.inputTokens,
    n_cache_tokens: totals.usage.cachedTokens,
    n_output_tokens: totals.usage.outputTokens,
    cost_usd: totals.costUsd,
  };
}

export class TrialModelUse {
  private finished: Promise<void> | undefined;

  private constructor(
    readonly session: GatewaySession,
    private readonly trialDir: string,
    private readonly agentName: string,
    private readonly agentVersion: string,
  ) {}

  /** Opens the trial's session, or undefined when the job runs without models. */
  static open(
    models: TrialModels | undefined,
    trial: {
      trialName: string;
      trialDir: string;
      agent: { name: string; version: string };
      /** The trial's event stream: each call becomes a `model-call` event. */
      emit?: TrialEmit;
    },
  ): TrialModelUse | undefined {
    if (!models) return undefined;
    const session = models.gateway.openSession({
      trialName: trial.trialName,
      model: models.target,
      ...(models.limits ? { limits: models.limits } : {}),
      recordFile: join(trial.trialDir, MODEL_CALLS_FILE),
      ...(trial.emit ? { emit: trial.emit } : {}),
    });
    return new TrialModelUse(session, trial.trialDir, trial.agent.name, trial.agent.version);
  }

  /**
   * Ends the session (its token stops working) and records what it used in `result`.
   * Safe to call more than once; later calls wait for the first.
   */
  finish(result: TrialResult): Promise<void> {
    this.finished ??= this.finishOnce(result);
    return this.finished;
  }

  private async finishOnce(result: TrialResult): Promise<void> {
    const totals = await this.session.close();
    const target = this.session.model;
    result.agent_info.model_info = { name: target.name, provider: target.provider };
    result.agent_result = { ...(result.agent_result ?? {}), ...usageFields(totals) };
    result.berth.files = { ...result.berth.files, model_calls: MODEL_CALLS_FILE };
    const path = join(this.trialDir, 'agent', 'trajectory.json');
    const exists = await lstat(path).then(
      () => true,
      () => false,
    );
    if (!exists && this.session.records.length > 0)
      await writeTrajectory(
        path,
        trajectoryFromRecords(
          this.session.records,
          { name: this.agentName, version: this.agentVersion, model_name: target.id },
          result.trial_name,
        ),
      ).catch(() => {});
  }
}
