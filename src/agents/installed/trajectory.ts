/**
 * The installed agents' own session logs converted to ATIF (`agent/trajectory.json`, Harbor's
 * Agent Trajectory Interchange Format, `ATIF-v1.7`; checked against Harbor's JSON Schema in
 * the tests). Each CLI's headless output is a stream of JSON lines:
 *
 * - Claude Code and Qwen Code `--output-format stream-json`: `system` (init), `assistant`
 *   (content blocks: text, thinking, tool_use; Claude Code sends one event per block of a
 *   message), `user` (tool_result blocks), `result` (usage, Claude Code's own cost);
 * - Codex `exec --json`: `item.completed` items (`agent_message`, `reasoning`,
 *   `command_execution`, `file_change`, `mcp_tool_call`, `web_search`), `turn.completed` usage;
 * - Gemini CLI `--output-format stream-json`: `message` (assistant text in deltas), `tool_use`,
 *   `tool_result`, `result` (stats);
 * - opencode `run --format json`: `step_start` ... `text` / `tool_use` (with its output) ...
 *   `step_finish` (tokens, cost) per model call.
 *
 * Lines that are not JSON (warnings) are skipped. Token counts the log lacks come from the
 * gateway's record of the trial (`usage`).
 */
import { ATIF_VERSION, type AtifStep, type AtifTrajectory } from '../../models/trajectory.ts';
import type { InstalledAgentName } from './packages.ts';

type Json = Record<string, unknown>;

/** What the conversion knows besides the log. */
export interface TrajectoryContext {
  agent: InstalledAgentName;
  version: string;
  model?: string;
  /** The instruction the agent was given (the first user step). */
  instruction: string;
  /** The trial's totals from the gateway, which win over the log's own counts. */
  usage?: { inputTokens: number; cachedTokens: number; outputTokens: number; costUsd: number | null };
}

function lines(text: string): Json[] {
  const out: Json[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const value = JSON.parse(t) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) out.push(value as Json);
    } catch {
      // a line cut off or not JSON: skipped
    }
  }
  return out;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Collects steps; agent steps hold tool calls whose results arrive later. */
class Builder {
  steps: AtifStep[] = [];
  private calls = new Map<string, AtifStep>();
  sessionId = '';
  totals: { input?: number; output?: number; cached?: number; cost?: number } = {};

  constructor(private readonly model?: string) {}

  user(message: string, timestamp?: string): void {
    this.steps.push({
      step_id: this.steps.length + 1,
      source: 'user',
      message,
      ...(timestamp ? { timestamp } : {}),
    });
  }

  agent(timestamp?: string): AtifStep {
    const step: AtifStep = {
      step_id: this.steps.length + 1,
      source: 'agent',
      message: '',
      ...(timestamp ? { timestamp } : {}),
      ...(this.model ? { model_name: this.model } : {}),
    };
    this.steps.push(step);
    return step;
  }

  call(step: AtifStep, id: string, name: string, args: unknown): void {
    const callId = id || `call_${step.step_id}_${(step.tool_calls ?? []).length}`;
    step.tool_calls = [
      ...(step.tool_calls ?? []),
      { tool_call_id: callId, function_name: name, arguments: obj(args) },
    ];
    this.calls.set(callId, step);
  }

  result(id: string, content: string): void {
    const step = this.calls.get(id) ?? this.steps.findLast((s) => s.source === 'agent');
    if (!step) return;
    step.observation = { results: [...(step.observation?.results ?? []), { source_call_id: id, content }] };
  }
}

function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return str(content);
  return content.map((b) => (typeof b === 'string' ? b : str(obj(b).text ?? obj(b).content))).join('');
}

/** Claude Code / Qwen Code stream-json. */
function fromClaudeStream(events: Json[], b: Builder): void {
  let current: AtifStep | undefined;
  let currentId = '';
  for (const e of events) {
    if (e.type === 'system' && e.subtype === 'init') b.sessionId = str(e.session_id);
    else if (e.type === 'assistant') {
      const message = obj(e.message);
      const id = str(message.id);
      if (!current || id === '' || id !== currentId) current = b.agent();
      currentId = id;
      for (const raw of Array.isArray(message.content) ? message.content : []) {
        const block = obj(raw);
        if (block.type === 'text') current.message += str(block.text);
        else if (block.type === 'thinking')
          current.reasoning_content = (current.reasoning_content ?? '') + str(block.thinking);
        else if (block.type === 'tool_use') b.call(current, str(block.id), str(block.name), block.input);
      }
    } else if (e.type === 'user') {
      const content = obj(e.message).content;
      for (const raw of Array.isArray(content) ? content : []) {
        const block = obj(raw);
        if (block.type === 'tool_result') b.result(str(block.tool_use_id), blocksText(block.content));
      }
      current = undefined;
    } else if (e.type === 'result') {
      const usage = obj(e.usage);
      const cached = num(usage.cache_read_input_tokens) ?? 0;
      b.totals = {
        input: (num(usage.input_tokens) ?? 0) + cached + (num(usage.cache_creation_input_tokens) ?? 0),
        output: num(usage.output_tokens),
        cached,
      };
    }
  }
}

/** Codex `exec --json`. */
function fromCodex(events: Json[], b: Builder): void {
  let reasoning = '';
  for (const e of events) {
    if (e.type === 'thread.started') b.sessionId = str(e.thread_id);
    else if (e.type === 'item.completed') {
      const item = obj(e.item);
      if (item.type === 'reasoning') reasoning += str(item.text);
      else if (item.type === 'agent_message') {
        const step = b.agent();
        step.message = str(item.text);
        if (reasoning) step.reasoning_content = reasoning;
        reasoning = '';
      } else if (
        ['command_execution', 'file_change', 'mcp_tool_call', 'web_search'].includes(str(item.type))
      ) {
        const step = b.agent();
        if (reasoning) step.reasoning_content = reasoning;
        reasoning = '';
        const id = str(item.id);
        if (item.type === 'command_execution') {
          b.call(step, id, 'exec_command', { command: item.command });
          b.result(
            id,
            `${str(item.aggregated_output)}${item.exit_code !== undefined ? `\n[exit code ${str(item.exit_code)}]` : ''}`,
          );
        } else if (item.type === 'file_change') {
          b.call(step, id, 'apply_patch', { changes: item.changes });
          b.result(id, str(item.status));
        } else if (item.type === 'mcp_tool_call') {
          b.call(step, id, `${str(item.server)}.${str(item.tool)}`, item.arguments);
          b.result(id, str(item.result ?? item.error));
        } else {
          b.call(step, id, 'web_search', { query: item.query });
        }
      }
    } else if (e.type === 'turn.completed') {
      const usage = obj(e.usage);
      b.totals = {
        input: (b.totals.input ?? 0) + (num(usage.input_tokens) ?? 0),
        output: (b.totals.output ?? 0) + (num(usage.output_tokens) ?? 0),
        cached: (b.totals.cached ?? 0) + (num(usage.cached_input_tokens) ?? 0),
      };
    }
  }
}

/** Gemini CLI stream-json. */
function fromGemini(events: Json[], b: Builder): void {
  let current: AtifStep | undefined;
  for (const e of events) {
    const ts = str(e.timestamp) || undefined;
    if (e.type === 'init') b.sessionId = str(e.session_id);
    else if (e.type === 'message' && e.role === 'assistant') {
      if (!current || (current.tool_calls ?? []).length > 0) current = b.agent(ts);
      current.message += str(e.content);
    } else if (e.type === 'tool_use') {
      current ??= b.agent(ts);
      b.call(current, str(e.tool_id), str(e.tool_name), e.parameters);
    } else if (e.type === 'tool_result') {
      b.result(str(e.tool_id), str(e.output ?? obj(e.error).message ?? e.status));
    } else if (e.type === 'result') {
      const stats = obj(e.stats);
      b.totals = {
        input: num(stats.input_tokens),
        output: num(stats.output_tokens),
        cached: num(stats.cached),
      };
    }
  }
}

/** opencode `run --format json`. */
function fromOpencode(events: Json[], b: Builder): void {
  let current: AtifStep | undefined;
  const totals = { input: 0, output: 0, cached: 0, cost: 0 };
  for (const e of events) {
    const part = obj(e.part);
    const ts = typeof e.timestamp === 'number' ? new Date(e.timestamp).toISOString() : undefined;
    if (!b.sessionId && e.sessionID) b.sessionId = str(e.sessionID);
    if (e.type === 'step_start') current = b.agent(ts);
    const open = (): AtifStep => {
      current ??= b.agent(ts);
      return current;
    };
    if (e.type === 'text') open().message += str(part.text);
    else if (e.type === 'reasoning') {
      const step = open();
      step.reasoning_content = (step.reasoning_content ?? '') + str(part.text);
    } else if (e.type === 'tool_use') {
      const step = open();
      const state = obj(part.state);
      const id = str(part.callID);
      b.call(step, id, str(part.tool), state.input);
      b.result(id, str(state.output ?? state.error ?? state.status));
    } else if (e.type === 'step_finish') {
      const tokens = obj(part.tokens);
      const cache = obj(tokens.cache);
      const metrics = {
        prompt_tokens: (num(tokens.input) ?? 0) + (num(cache.read) ?? 0),
        completion_tokens: num(tokens.output) ?? 0,
        cached_tokens: num(cache.read) ?? 0,
      };
      if (current) current.metrics = metrics;
      totals.input += metrics.prompt_tokens;
      totals.output += metrics.completion_tokens;
      totals.cached += metrics.cached_tokens;
      current = undefined;
    }
  }
  b.totals = { input: totals.input, output: totals.output, cached: totals.cached };
}

const CONVERTERS: Record<InstalledAgentName, (events: Json[], b: Builder) => void> = {
  'claude-code': fromClaudeStream,
  'qwen-code': fromClaudeStream,
  codex: fromCodex,
  'gemini-cli': fromGemini,
  opencode: fromOpencode,
};

/**
 * The ATIF trajectory of an agent's native log, or undefined when the log holds no step
 * (the CLI failed before its first model call).
 */
export function trajectoryFromNativeLog(log: string, context: TrajectoryContext): AtifTrajectory | undefined {
  const b = new Builder(context.model);
  b.user(context.instruction);
  CONVERTERS[context.agent](lines(log), b);
  if (b.steps.length <= 1) return undefined;
  const usage = context.usage;
  const final: NonNullable<AtifTrajectory['final_metrics']> = { total_steps: b.steps.length };
  const input = usage ? usage.inputTokens : b.totals.input;
  const output = usage ? usage.outputTokens : b.totals.output;
  const cached = usage ? usage.cachedTokens : b.totals.cached;
  if (input !== undefined) final.total_prompt_tokens = input;
  if (output !== undefined) final.total_completion_tokens = output;
  if (cached !== undefined) final.total_cached_tokens = cached;
  if (usage?.costUsd !== undefined && usage.costUsd !== null) final.total_cost_usd = usage.costUsd;
  return {
    schema_version: ATIF_VERSION,
    session_id: b.sessionId || `${context.agent}-session`,
    agent: {
      name: context.agent,
      version: context.version,
      ...(context.model ? { model_name: context.model } : {}),
    },
    steps: b.steps,
    notes: `converted by berth from ${context.agent}'s own log (agent/${context.agent}.txt)${usage ? "; token and cost totals from berth's model gateway" : ''}`,
    final_metrics: final,
  };
}
