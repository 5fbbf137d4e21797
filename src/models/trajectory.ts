/**
 * Trajectories in Harbor's Agent Trajectory Interchange Format (ATIF,
 * `schema_version` `ATIF-v1.7`; Harbor's `harbor.models.trajectories`, checked
 * against its JSON Schema in test/models/trajectory.test.ts), written to a
 * trial's `agent/trajectory.json`.
 *
 * `trajectoryFromRecords` builds one from the gateway's records of a trial's
 * model calls alone (what any agent that calls models through the gateway
 * leaves): each call is an agent step (its text, reasoning, tool calls and
 * metrics), and the tool results the next call sends back are that step's
 * observation.
 */
import { randomUUID } from 'node:crypto';
import type { LanguageModelV3Message } from '@ai-sdk/provider';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import type { ModelCallRecord } from './gateway.ts';

export const ATIF_VERSION = 'ATIF-v1.7';

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Record<string, unknown>;
}

export interface AtifObservationResult {
  source_call_id?: string | null;
  content?: string | null;
  extra?: Record<string, unknown> | null;
}

export interface AtifMetrics {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  cached_tokens?: number | null;
  cost_usd?: number | null;
  extra?: Record<string, unknown> | null;
}

export interface AtifStep {
  step_id: number;
  timestamp?: string | null;
  source: 'system' | 'user' | 'agent';
  model_name?: string | null;
  message: string;
  reasoning_content?: string | null;
  tool_calls?: AtifToolCall[] | null;
  observation?: { results: AtifObservationResult[] } | null;
  metrics?: AtifMetrics | null;
  llm_call_count?: number | null;
  extra?: Record<string, unknown> | null;
}

export interface AtifTrajectory {
  schema_version: typeof ATIF_VERSION;
  session_id: string;
  trajectory_id?: string;
  agent: {
    name: string;
    version: string;
    model_name?: string | null;
    tool_definitions?: Record<string, unknown>[] | null;
    extra?: Record<string, unknown> | null;
  };
  steps: AtifStep[];
  notes?: string | null;
  final_metrics?: {
    total_prompt_tokens?: number | null;
    total_completion_tokens?: number | null;
    total_cached_tokens?: number | null;
    total_cost_usd?: number | null;
    total_steps?: number | null;
    extra?: Record<string, unknown> | null;
  } | null;
  extra?: Record<string, unknown> | null;
}

/** A tool call's arguments as an object (ATIF's `arguments`), whatever text the model sent. */
export function toolArguments(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    return { value };
  } catch {
    return { raw: text };
  }
}

/** The step metrics of one recorded call. */
export function metricsOf(record: ModelCallRecord): AtifMetrics {
  return {
    prompt_tokens: record.usage.input_tokens,
    completion_tokens: record.usage.output_tokens,
    cached_tokens: record.usage.cached_tokens,
    cost_usd: record.cost_usd,
    ...(record.usage.reasoning_tokens || record.usage.cache_write_tokens
      ? {
          extra: {
            reasoning_tokens: record.usage.reasoning_tokens,
            cache_write_tokens: record.usage.cache_write_tokens,
          },
        }
      : {}),
  };
}

/** Sums of the agent steps' metrics (a null cost anywhere makes the total null). */
export function finalMetrics(steps: readonly AtifStep[]): NonNullable<AtifTrajectory['final_metrics']> {
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  let cost: number | null = 0;
  for (const step of steps) {
    const m = step.metrics;
    if (!m) continue;
    prompt += m.prompt_tokens ?? 0;
    completion += m.completion_tokens ?? 0;
    cached += m.cached_tokens ?? 0;
    cost = cost === null || m.cost_usd === null || m.cost_usd === undefined ? null : cost + m.cost_usd;
  }
  return {
    total_prompt_tokens: prompt,
    total_completion_tokens: completion,
    total_cached_tokens: cached,
    total_cost_usd: cost === null ? null : Math.round(cost * 1e9) / 1e9,
    total_steps: steps.length,
  };
}

function messageText(message: LanguageModelV3Message): string {
  if (message.role === 'system') return message.content;
  return (message.content as unknown as Array<Record<string, unknown>>)
    .map((part) => {
      if (part.type === 'text') return String(part.text ?? '');
      if (part.type === 'file') return '[file]';
      if (part.type === 'tool-result') return resultText(part.output);
      return '';
    })
    .join('');
}

function resultText(output: unknown): string {
  const o = output as { type?: string; value?: unknown } | undefined;
  if (!o) return '';
  return typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? '');
}

/**
 * A trajectory from the gateway's records of one trial (in call order). Refused calls are
 * left out; failed calls are agent steps with the error in `extra`.
 */
export function trajectoryFromRecords(
  records: readonly ModelCallRecord[],
  agent: AtifTrajectory['agent'],
  sessionId: string,
): AtifTrajectory {
  const steps: AtifStep[] = [];
  const calls = records.filter((r) => r.route !== 'refused');
  let previous: AtifStep | undefined;
  for (const record of calls) {
    for (const message of record.input) {
      if (message.role === 'tool') {
        const results = message.content
          .filter((part) => part.type === 'tool-result')
          .map((part) => ({
            source_call_id: (part as { toolCallId: string }).toolCallId,
            content: resultText((part as { output: unknown }).output),
          }));
        if (previous)
          previous.observation = { results: [...(previous.observation?.results ?? []), ...results] };
      } else if (message.role === 'system' || message.role === 'user') {
        // (Anthropic and Gemini tool results arrive as `tool` messages: the codecs split them out.)
        const text = messageText(message);
        steps.push({
          step_id: steps.length + 1,
          timestamp: record.started_at,
          source: message.role,
          message: text,
        });
      }
    }
    const output = record.output;
    const step: AtifStep = {
      step_id: steps.length + 1,
      timestamp: record.started_at,
      source: 'agent',
      model_name: record.model,
      message: output?.text ?? '',
      ...(output?.reasoning ? { reasoning_content: output.reasoning } : {}),
      ...(output?.tool_calls.length
        ? {
            tool_calls: output.tool_calls.map((c) => ({
              tool_call_id: c.id,
              function_name: c.name,
              arguments: toolArguments(c.arguments),
            })),
          }
        : {}),
      metrics: metricsOf(record),
      llm_call_count: 1,
      ...(record.error ? { extra: { error: record.error, status: record.status } } : {}),
    };
    steps.push(step);
    previous = step;
  }
  return {
    schema_version: ATIF_VERSION,
    session_id: sessionId,
    trajectory_id: randomUUID(),
    agent,
    steps,
    notes: 'Built by berth from the model gateway record of every model call of the trial.',
    final_metrics: finalMetrics(steps),
  };
}

/** Writes `<logDir>/trajectory.json` atomically (a link planted there is replaced, never followed). */
export async function writeTrajectory(path: string, trajectory: AtifTrajectory): Promise<void> {
  await writeJsonAtomic(path, trajectory);
}
