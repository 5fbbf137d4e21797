/**
 * deckhand: berth's own model-driven coding agent (`-a deckhand -m PROVIDER/NAME`).
 *
 * It drives the task's environment from the host through `Environment.exec`,
 * so it works wherever berth runs a task (local sandbox, Docker; SWE-bench rows,
 * Harbor tasks, the multilingual tasks) with nothing installed in the
 * environment. Its model calls go through the trial's gateway session as OpenAI
 * chat completions (the gateway translates to whatever the model speaks).
 *
 * The loop: system prompt, the task's instruction, then up to `maxSteps` model
 * calls; each call's tool calls (`bash`, `edit`, `finish`) run in order and
 * their results go back to the model. It stops at `finish`, at an answer
 * without tool calls, at the step limit, when the gateway refuses a call (a
 * trial or job limit) or at the agent timeout (the trial still grades what it
 * left). Context: every observation is cut to `maxObservationChars`, and when
 * the conversation grows past `contextChars` the oldest observations are
 * replaced by a note; both are recorded in the trajectory.
 *
 * On SWE-bench rows its result is the repository's diff, graded in a fresh
 * environment (as the `command` agent's). It writes `agent/trajectory.json`
 * (ATIF-v1.7) with every step, tool call, observation and per-step metrics.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3Message,
  type LanguageModelV3ToolCall,
} from '@ai-sdk/provider';
import type { GatewaySession, ModelCallRecord } from '../../models/gateway.ts';
import type { ModelTarget } from '../../models/providers.ts';
import {
  ATIF_VERSION,
  type AtifStep,
  type AtifTrajectory,
  finalMetrics,
  metricsOf,
  toolArguments,
  writeTrajectory,
} from '../../models/trajectory.ts';
import { AgentTimeoutError } from '../../trials/errors.ts';
import { VERSION } from '../../version.ts';
import type { Agent, AgentContext, AgentInfo, AgentResult } from '../agent.ts';
import { agentDiff, diffBase, writePrediction } from '../command.ts';
import { runTool, TOOL_DEFINITIONS } from './tools.ts';

export const DECKHAND = 'deckhand';

/** deckhand's options: plain data (they go into trial specs). */
export interface DeckhandOptions {
  /** The model, as `-m` resolved it. */
  model: ModelTarget;
  /** Model calls before it stops (default 60). */
  maxSteps?: number;
  /** Longest observation given to the model, in characters (default 12000). */
  maxObservationChars?: number;
  /** Conversation size in characters past which old observations are dropped (default 400000, about 100k tokens). */
  contextChars?: number;
  /** Sampling temperature (default: the model's). */
  temperature?: number;
  /** Longest answer per call, in tokens (default 8192). */
  maxOutputTokens?: number;
  /** The agent name the user typed, when it is another's (`terminus-2`): recorded, never claimed. */
  requestedAs?: string;
}

/** berth's own system prompt for deckhand (written for berth; no other agent's prompt). */
export const SYSTEM_PROMPT = `You are deckhand, a careful software engineer working alone in a code repository through tools. Nobody will answer questions: work out what is needed from the task, the code and the tests, then do it.

How to work:
- Start by finding your way: list the relevant folders, read the code the task is about, look for existing tests.
- Before changing code, reproduce the problem or write down how you will check the change (a small script, a test command).
- Make the smallest change that fully solves the task, in the style of the surrounding code. Do not rewrite unrelated code, do not change tests to make them pass unless the task asks for it, and do not leave debugging files behind.
- After changing code, run the relevant tests or your check again and read the output. If something fails, find out why before trying again.
- The environment may have no network access; use what is installed.
- Each bash call runs in a fresh shell in the working folder. Long outputs are cut: narrow them with grep, head, tail or sed -n.
- Use the edit tool for changes to files; its str_replace needs the old text exactly once.
- When the task is done, call finish with a short summary. If you cannot finish, still call finish and say what is missing.`;

/** The first user message: the task's instruction and where the work is. */
export function taskMessage(instruction: string, workdir: string): string {
  return `Working folder: ${workdir}\n\n<task>\n${instruction.trim()}\n</task>\n\nSolve the task in the working folder, check your work, then call finish.`;
}

type AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];

/** Why the loop ended. */
export type StopReason = 'finish' | 'no_tool_call' | 'max_steps' | 'model_limit' | 'timeout' | 'model_error';

/** The model could not be called (after the gateway's retries): the trial ends as an error. */
export class AgentModelError extends Error {
  override name = 'AgentModelError';
}

export class DeckhandAgent implements Agent {
  readonly info: AgentInfo;

  constructor(private readonly options: DeckhandOptions) {
    this.info = { name: DECKHAND, version: VERSION, modelName: options.model.id };
  }

  /** Unknown until the agent has run. */
  plannedPatch(): undefined {
    return undefined;
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const { task, environment, logDir } = context;
    const session = context.models;
    if (!session)
      throw new Error(`the ${DECKHAND} agent needs a model: run with -m PROVIDER/NAME (see docs/models.md)`);
    await mkdir(logDir, { recursive: true });
    const gradedOnDiff = task.verifier.kind === 'swebench';
    const base = gradedOnDiff ? await diffBase(environment) : undefined;
    const started = Date.now();
    const deadline =
      context.timeoutSec !== undefined ? started + context.timeoutSec * 1000 : Number.POSITIVE_INFINITY;
    const secondsLeft = () => Math.max(0, (deadline - Date.now()) / 1000);
    const maxSteps = this.options.maxSteps ?? 60;
    const maxObservationChars = this.options.maxObservationChars ?? 12_000;
    const contextChars = this.options.contextChars ?? 400_000;

    const model = clientModel(session);
    const instruction = taskMessage(task.instruction, environment.workdir);
    const prompt: LanguageModelV3Message[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: [{ type: 'text', text: instruction }] },
    ];
    const now = () => new Date().toISOString();
    const steps: AtifStep[] = [
      { step_id: 1, timestamp: now(), source: 'system', message: SYSTEM_PROMPT },
      { step_id: 2, timestamp: now(), source: 'user', message: instruction },
    ];
    const notes: string[] = [];
    let stop: StopReason = 'max_steps';
    let modelError: string | undefined;
    const firstRecord = session.records.length;
    let calls = 0;

    for (let step = 1; step <= maxSteps; step++) {
      if (secondsLeft() <= 0) {
        stop = 'timeout';
        break;
      }
      const dropped = keepWithin(prompt, contextChars);
      if (dropped > 0)
        notes.push(
          `before model call ${step}: ${dropped} old observation(s) replaced by a note to keep the context within ${contextChars} characters`,
        );
      const left = secondsLeft();
      const callSignal = AbortSignal.any([
        ...(context.signal ? [context.signal] : []),
        ...(Number.isFinite(left) ? [AbortSignal.timeout(Math.ceil(Math.max(1, left) * 1000))] : []),
      ]);
      let result: Awaited<ReturnType<LanguageModelV3['doGenerate']>>;
      const at = now();
      try {
        calls += 1;
        result = await model.doGenerate({
          prompt,
          tools: TOOL_DEFINITIONS,
          toolChoice: { type: 'auto' },
          maxOutputTokens: this.options.maxOutputTokens ?? 8192,
          ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
          abortSignal: callSignal,
        });
      } catch (error) {
        if (context.signal?.aborted) throw error;
        if (secondsLeft() <= 0) {
          stop = 'timeout';
          break;
        }
        const status = APICallError.isInstance(error) ? error.statusCode : undefined;
        const message = APICallError.isInstance(error)
          ? `${error.message} ${error.responseBody ?? ''}`.trim()
          : (error as Error).message;
        stop = status === 403 ? 'model_limit' : 'model_error';
        modelError = message;
        steps.push({
          step_id: steps.length + 1,
          timestamp: at,
          source: 'agent',
          message: '',
          extra: { error: message, status: status ?? null },
        });
        break;
      }
      const content = result.content;
      const calls_ = content.filter((c): c is LanguageModelV3ToolCall => c.type === 'tool-call');
      const text = content
        .filter((c) => c.type === 'text')
        .map((c) => (c as { text: string }).text)
        .join('');
      const reasoning = content
        .filter((c) => c.type === 'reasoning')
        .map((c) => (c as { text: string }).text)
        .join('');
      const assistant: AssistantPart[] = [];
      if (text) assistant.push({ type: 'text', text });
      for (const call of calls_)
        assistant.push({
          type: 'tool-call',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
        });
      prompt.push({ role: 'assistant', content: assistant });
      const atif: AtifStep = {
        step_id: steps.length + 1,
        timestamp: at,
        source: 'agent',
        model_name: this.options.model.id,
        message: text,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        llm_call_count: 1,
        metrics: {
          prompt_tokens: result.usage.inputTokens.total ?? null,
          completion_tokens: result.usage.outputTokens.total ?? null,
          cached_tokens: result.usage.inputTokens.cacheRead ?? null,
        },
      };
      steps.push(atif);
      if (calls_.length === 0) {
        stop = 'no_tool_call';
        break;
      }
      atif.tool_calls = calls_.map((c) => ({
        tool_call_id: c.toolCallId,
        function_name: c.toolName,
        arguments: toolArguments(c.input),
      }));
      const results: NonNullable<AtifStep['observation']>['results'] = [];
      const toolMessage: Extract<LanguageModelV3Message, { role: 'tool' }> = { role: 'tool', content: [] };
      let finished = false;
      for (const call of calls_) {
        const outcome = await runTool(call.toolName, toolArguments(call.input), {
          environment,
          secondsLeft,
          maxObservationChars,
          ...(context.signal ? { signal: context.signal } : {}),
        });
        results.push({
          source_call_id: call.toolCallId,
          content: outcome.content,
          ...(outcome.cut || outcome.isError
            ? {
                extra: {
                  ...(outcome.cut ? { characters_cut: outcome.cut } : {}),
                  ...(outcome.isError ? { error: true } : {}),
                },
              }
            : {}),
        });
        if (outcome.cut)
          notes.push(
            `step ${atif.step_id}: the output of ${call.toolName} (${call.toolCallId}) was cut by ${outcome.cut} characters`,
          );
        toolMessage.content.push({
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: outcome.isError
            ? { type: 'error-text', value: outcome.content }
            : { type: 'text', value: outcome.content },
        });
        if (outcome.finished) finished = true;
      }
      atif.observation = { results };
      prompt.push(toolMessage);
      if (finished) {
        stop = 'finish';
        break;
      }
      if (step === maxSteps) notes.push(`stopped at the step limit of ${maxSteps} model calls`);
    }

    // Per-step metrics and cost from the gateway's record of each call (in call order).
    const records = await recordsOf(session, firstRecord, calls);
    let index = 0;
    for (const step of steps) {
      if (step.source !== 'agent') continue;
      const record = records[index++];
      if (record) step.metrics = metricsOf(record);
    }
    const trajectory: AtifTrajectory = {
      schema_version: ATIF_VERSION,
      session_id: randomUUID(),
      trajectory_id: randomUUID(),
      agent: {
        name: DECKHAND,
        version: VERSION,
        model_name: this.options.model.id,
        tool_definitions: TOOL_DEFINITIONS.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.inputSchema },
        })),
        extra: {
          max_steps: maxSteps,
          max_observation_chars: maxObservationChars,
          context_chars: contextChars,
          ...(this.options.requestedAs
            ? {
                requested_as: this.options.requestedAs,
                note: `${this.options.requestedAs} is not part of berth: this is berth's own agent, ${DECKHAND}`,
              }
            : {}),
        },
      },
      steps,
      notes: notes.length > 0 ? notes.join('\n') : null,
      final_metrics: {
        ...finalMetrics(steps.filter((s) => s.source === 'agent')),
        total_steps: steps.length,
      },
      extra: { stop_reason: stop, ...(modelError ? { model_error: modelError } : {}) },
    };
    await writeTrajectory(join(logDir, 'trajectory.json'), trajectory);

    const metadata: Record<string, unknown> = {
      agent: DECKHAND,
      stop_reason: stop,
      model_calls: calls,
      steps: steps.length,
      duration_sec: Math.round((Date.now() - started) / 100) / 10,
      ...(modelError ? { model_error: modelError } : {}),
      ...(this.options.requestedAs ? { requested_as: this.options.requestedAs } : {}),
    };
    const result: AgentResult = { modelName: this.options.model.id, metadata };
    if (gradedOnDiff && base) {
      result.patch = await agentDiff(environment, base, context.signal);
      result.gradeInFreshEnvironment = true;
      metadata.diff_base = base;
      await writePrediction(logDir, task.name, this.options.model.id, result.patch);
    }
    if (stop === 'timeout')
      throw new AgentTimeoutError(`${DECKHAND} passed the agent timeout of ${context.timeoutSec} s`, result);
    if (stop === 'model_error') throw new AgentModelError(`the model could not be called: ${modelError}`);
    return result;
  }
}

/** The OpenAI-compatible chat model of the session, at the gateway, with the trial's token. */
function clientModel(session: GatewaySession): LanguageModelV3 {
  return createOpenAICompatible({
    name: 'berth-gateway',
    baseURL: session.endpoints().openai,
    apiKey: session.token,
    includeUsage: true,
  }).chatModel(session.model.name);
}

/** The session's records of this agent's calls (waits up to 2 s for the last to be recorded). */
async function recordsOf(session: GatewaySession, first: number, calls: number): Promise<ModelCallRecord[]> {
  const until = Date.now() + 2000;
  while (session.records.length - first < calls && Date.now() < until)
    await new Promise((r) => setTimeout(r, 10));
  return session.records.slice(first);
}

/** Size of a message in characters (its text and tool payloads). */
function size(message: LanguageModelV3Message): number {
  return JSON.stringify(message.content).length;
}

/**
 * Replaces the oldest tool results by a note until the conversation is within `limit`
 * characters (the system prompt, the task and the last exchange are always kept).
 * @returns how many results were replaced.
 */
export function keepWithin(prompt: LanguageModelV3Message[], limit: number): number {
  let total = prompt.reduce((sum, m) => sum + size(m), 0);
  let dropped = 0;
  for (let i = 2; i < prompt.length - 2 && total > limit; i++) {
    const message = prompt[i];
    if (message?.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const value = (part.output as { value?: unknown }).value;
      if (typeof value !== 'string' || value.startsWith('[observation removed')) continue;
      const note = '[observation removed by berth to keep the conversation within the context window]';
      total -= value.length - note.length;
      part.output = { type: 'text', value: note };
      dropped++;
    }
  }
  return dropped;
}
