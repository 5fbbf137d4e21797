// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell parameter expansions (${TMPDIR:-/tmp}), not templates
/**
 * How each installed agent runs headless through berth's model gateway: the variables and
 * configuration files that point it at the gateway (with the trial's token as its key), the
 * command line with permissions bypassed as its vendor documents, the agent's own options
 * (`--ak key=value`), and where its session log goes.
 *
 * Sources: each CLI's `--help` on the pinned versions (src/agents/installed/packages.ts) and
 * its documentation: Claude Code's `--print --output-format=stream-json
 * --permission-mode=bypassPermissions` with `ANTHROPIC_BASE_URL`/`ANTHROPIC_API_KEY`
 * (IS_SANDBOX=1 lets bypassPermissions run as root, as Harbor sets it); Codex's `exec --json
 * --dangerously-bypass-approvals-and-sandbox` with a `model_providers` entry in
 * `$CODEX_HOME/config.toml`; Gemini CLI's `--yolo --output-format stream-json` with
 * `GOOGLE_GEMINI_BASE_URL`/`GEMINI_API_KEY`; opencode's `run --format json` with a provider in
 * `opencode.json`; Qwen Code's `--yolo --output-format stream-json` with `OPENAI_BASE_URL`/
 * `OPENAI_API_KEY`/`OPENAI_MODEL`.
 */
import { UsageError } from '../../errors.ts';
import type { McpServer } from '../../tasks/task.ts';
import { shellQuote } from '../../util/shell.ts';
import { mcpServersJson } from '../command.ts';
import type { InstalledAgentName } from './packages.ts';

/** The wire protocol an agent speaks to its model (the gateway serves each). */
export type AgentProtocol = 'anthropic' | 'openai-responses' | 'openai-chat' | 'gemini';

/** Where a trial's agent reaches its model: berth's model gateway (or a server speaking its protocols). */
export interface ModelEndpoint {
  /** `http://HOST:PORT` as the host sees it (berth routes it into the environment). */
  origin: string;
  /** The key the agent sends (the trial's gateway token; never a real key). */
  token: string;
  /** The model name the agent asks for (the part after the provider: `claude-sonnet-4-5`). */
  model: string;
}

/** Base URLs per protocol family at `origin`, as the vendors' SDKs take them (the gateway's layout). */
export function endpointsAt(origin: string): { openai: string; anthropic: string; gemini: string } {
  return { openai: `${origin}/v1`, anthropic: origin, gemini: origin };
}

/** What a recipe builds a run from. */
export interface RecipeInput {
  /** Base URLs as seen from inside the environment. */
  endpoints: { openai: string; anthropic: string; gemini: string };
  token: string;
  model: string;
  /** The agent's own options (`--ak`), checked against the recipe's table. */
  options: Readonly<Record<string, string>>;
  /** The task's MCP servers (Harbor's `[[environment.mcp_servers]]`), written into the agent's configuration. */
  mcpServers?: readonly McpServer[];
  /** The task's skills folder inside the environment (Harbor's `skills_dir`), copied where the agent reads skills. */
  skillsDir?: string;
}

/**
 * The shell line that copies the task's skills (`skills_dir`, a folder inside the environment)
 * into `target` (an agent's skills folder, a shell word), as Harbor's installed agents do; none
 * without skills. A missing or empty folder copies nothing.
 */
function copySkills(input: RecipeInput, target: string): string[] {
  if (!input.skillsDir) return [];
  return [`mkdir -p ${target} && { cp -R ${shellQuote(input.skillsDir)}/. ${target}/ 2>/dev/null || true; }`];
}

/** The MCP servers as `{name: entry}` in one agent's words; none when the task has none. */
function mcpEntries(
  input: RecipeInput,
  entry: (server: McpServer) => Record<string, unknown>,
): Record<string, Record<string, unknown>> | undefined {
  if (!input.mcpServers?.length) return undefined;
  return Object.fromEntries(input.mcpServers.map((server) => [server.name, entry(server)]));
}

/** Gemini CLI's and Qwen Code's `mcpServers` entry (`httpUrl` for streamable HTTP, `url` for SSE). */
function geminiMcpEntry(server: McpServer): Record<string, unknown> {
  if (server.transport === 'stdio') return { command: server.command, args: server.args };
  return server.transport === 'streamable-http' ? { httpUrl: server.url } : { url: server.url };
}

/** Codex's `[mcp_servers.<name>]` tables in its config.toml. */
function codexMcpToml(input: RecipeInput): string[] {
  const out: string[] = [];
  for (const server of input.mcpServers ?? []) {
    out.push(`[mcp_servers.${JSON.stringify(server.name)}]`);
    if (server.transport === 'stdio') {
      out.push(`command = ${JSON.stringify(server.command)}`, `args = ${JSON.stringify(server.args)}`);
    } else out.push(`url = ${JSON.stringify(server.url)}`);
  }
  return out;
}

/** One agent option (`--ak NAME=VALUE`). */
export interface AgentOption {
  description: string;
  /** Allowed values; any value when absent. */
  choices?: readonly string[];
  /** A whole number (max turns). */
  integer?: boolean;
}

export interface AgentRecipe {
  protocol: AgentProtocol;
  /** The agent's options, by name. */
  options: Readonly<Record<string, AgentOption>>;
  /** Variables for the agent's command (the token among them; names with KEY/TOKEN are masked in logs). */
  env(input: RecipeInput): Record<string, string>;
  /**
   * Shell lines run with `bash` in the task's working folder: configuration files first, then
   * the agent, whose standard output is its native log. `$BERTH_AGENT_HOME` is the installed
   * agent's folder, `$BERTH_INSTRUCTION_FILE` the instruction, `$BERTH_AGENT_LOG_DIR` the log folder.
   */
  script(input: RecipeInput): string;
  /** Files of the agent's own session log, under the log folder, kept as `agent/<path>`. */
  sessionDir?: string;
}

const INSTRUCTION = '"$(cat "$BERTH_INSTRUCTION_FILE")"';

/** `--flag value` pairs for the options that are set. */
function flags(
  options: Readonly<Record<string, string>>,
  table: Record<string, (v: string) => string[]>,
): string[] {
  const out: string[] = [];
  for (const [name, make] of Object.entries(table)) {
    const value = options[name];
    if (value !== undefined) out.push(...make(value));
  }
  return out;
}

function line(argv: string[]): string {
  return argv.map((a) => (a.startsWith('"$') ? a : shellQuote(a))).join(' ');
}

const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** Claude Code's user-scoped `.claude.json` with the task's MCP servers (`http` for streamable HTTP). */
function claudeMcp(input: RecipeInput): string[] {
  if (!input.mcpServers?.length) return [];
  const servers = mcpServersJson(input.mcpServers);
  return [
    `printf '%s' ${shellQuote(JSON.stringify({ mcpServers: servers }))} > "$CLAUDE_CONFIG_DIR/.claude.json"`,
  ];
}

export const RECIPES: Readonly<Record<InstalledAgentName, AgentRecipe>> = {
  'claude-code': {
    protocol: 'anthropic',
    options: {
      max_turns: { description: 'most agentic turns (`--max-turns`)', integer: true },
      reasoning_effort: { description: 'effort level (`--effort`)', choices: EFFORTS },
      max_budget_usd: { description: "Claude Code's own spending cap (`--max-budget-usd`)" },
      allowed_tools: { description: 'tools allowed, comma-separated (`--allowed-tools`)' },
      disallowed_tools: { description: 'tools denied, comma-separated (`--disallowed-tools`)' },
      append_system_prompt: { description: 'text added to the system prompt (`--append-system-prompt`)' },
    },
    env: (input) => ({
      ANTHROPIC_BASE_URL: input.endpoints.anthropic,
      ANTHROPIC_API_KEY: input.token,
      // Every call (the "small fast" model's too) asks for the trial's model.
      ANTHROPIC_MODEL: input.model,
      ANTHROPIC_SMALL_FAST_MODEL: input.model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: input.model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: input.model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: input.model,
      CLAUDE_CODE_SUBAGENT_MODEL: input.model,
      // bypassPermissions as root inside a sandbox (Harbor sets it too).
      IS_SANDBOX: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    }),
    sessionDir: 'sessions',
    script: (input) =>
      [
        'export CLAUDE_CONFIG_DIR="$BERTH_AGENT_LOG_DIR/sessions"',
        'mkdir -p "$CLAUDE_CONFIG_DIR"',
        // User-scoped MCP servers (loaded without a trust prompt), as Harbor writes them.
        ...claudeMcp(input),
        ...copySkills(input, '"$CLAUDE_CONFIG_DIR/skills"'),
        `${line([
          '"$BERTH_AGENT_HOME/bin/claude"',
          '--print',
          '--verbose',
          '--output-format=stream-json',
          '--permission-mode=bypassPermissions',
          '--model',
          input.model,
          ...flags(input.options, {
            max_turns: (v) => ['--max-turns', v],
            reasoning_effort: (v) => ['--effort', v],
            max_budget_usd: (v) => ['--max-budget-usd', v],
            allowed_tools: (v) => ['--allowed-tools', v],
            disallowed_tools: (v) => ['--disallowed-tools', v],
            append_system_prompt: (v) => ['--append-system-prompt', v],
          }),
          '--',
          INSTRUCTION,
        ])} </dev/null`,
      ].join('\n'),
  },
  codex: {
    protocol: 'openai-responses',
    options: {
      reasoning_effort: {
        description: 'reasoning effort (`-c model_reasoning_effort`)',
        choices: ['minimal', 'low', 'medium', 'high', 'xhigh'],
      },
      reasoning_summary: {
        description: 'reasoning summaries (`-c model_reasoning_summary`)',
        choices: ['auto', 'concise', 'detailed', 'none'],
      },
    },
    env: (input) => ({ BERTH_MODEL_TOKEN: input.token }),
    sessionDir: 'sessions',
    script: (input) => {
      const config = [
        `model = ${JSON.stringify(input.model)}`,
        'model_provider = "berth"',
        'check_for_update_on_startup = false',
        '[model_providers.berth]',
        'name = "berth model gateway"',
        `base_url = ${JSON.stringify(input.endpoints.openai)}`,
        'env_key = "BERTH_MODEL_TOKEN"',
        'wire_api = "responses"',
        'request_max_retries = 2',
        'stream_max_retries = 2',
        ...codexMcpToml(input),
        '',
      ].join('\n');
      return [
        'export CODEX_HOME="$(mktemp -d "${TMPDIR:-/tmp}/berth-codex.XXXXXX")"',
        `printf '%s' ${shellQuote(config)} > "$CODEX_HOME/config.toml"`,
        ...copySkills(input, '"$HOME/.agents/skills"'),
        'status=0',
        `${line([
          '"$BERTH_AGENT_HOME/bin/codex"',
          'exec',
          '--json',
          '--dangerously-bypass-approvals-and-sandbox',
          '--skip-git-repo-check',
          '--model',
          input.model,
          ...flags(input.options, {
            reasoning_effort: (v) => ['-c', `model_reasoning_effort=${JSON.stringify(v)}`],
            reasoning_summary: (v) => ['-c', `model_reasoning_summary=${JSON.stringify(v)}`],
          }),
          '--',
          INSTRUCTION,
        ])} </dev/null || status=$?`,
        // The session files (Codex's own log) go to the agent folder.
        'if [ -d "$CODEX_HOME/sessions" ]; then cp -R "$CODEX_HOME/sessions" "$BERTH_AGENT_LOG_DIR/sessions"; fi',
        'rm -rf "$CODEX_HOME"',
        'exit $status',
      ].join('\n');
    },
  },
  'gemini-cli': {
    protocol: 'gemini',
    options: {
      max_turns: {
        description: 'most session turns (`model.maxSessionTurns` in settings.json)',
        integer: true,
      },
    },
    env: (input) => ({
      GOOGLE_GEMINI_BASE_URL: input.endpoints.gemini,
      GEMINI_API_KEY: input.token,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    }),
    script: (input) => {
      const settings = {
        security: { auth: { selectedType: 'gemini-api-key' } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        ...(input.options.max_turns ? { model: { maxSessionTurns: Number(input.options.max_turns) } } : {}),
        ...(input.mcpServers?.length ? { mcpServers: mcpEntries(input, geminiMcpEntry) } : {}),
        ...(input.skillsDir ? { experimental: { skills: true } } : {}),
      };
      return [
        'export GEMINI_CLI_HOME="$(mktemp -d "${TMPDIR:-/tmp}/berth-gemini.XXXXXX")"',
        'mkdir -p "$GEMINI_CLI_HOME/.gemini"',
        `printf '%s' ${shellQuote(JSON.stringify(settings))} > "$GEMINI_CLI_HOME/.gemini/settings.json"`,
        ...copySkills(input, '"$GEMINI_CLI_HOME/.gemini/skills"'),
        'status=0',
        `${line([
          '"$BERTH_AGENT_HOME/bin/gemini"',
          '--yolo',
          '--skip-trust',
          '--model',
          input.model,
          '--output-format',
          'stream-json',
          '--prompt',
          INSTRUCTION,
        ])} </dev/null || status=$?`,
        'rm -rf "$GEMINI_CLI_HOME"',
        'exit $status',
      ].join('\n');
    },
  },
  opencode: {
    protocol: 'openai-chat',
    options: {
      agent: { description: "opencode's agent (`--agent`: build, plan...)" },
    },
    env: (input) => ({
      BERTH_MODEL_TOKEN: input.token,
      OPENCODE_DISABLE_AUTOUPDATE: 'true',
      OPENCODE_DISABLE_MODELS_FETCH: 'true',
      OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
      OPENCODE_DISABLE_SHARE: 'true',
      OPENCODE_PERMISSION: JSON.stringify({ '*': 'allow' }),
    }),
    script: (input) => {
      const config = {
        $schema: 'https://opencode.ai/config.json',
        model: `berth/${input.model}`,
        autoupdate: false,
        share: 'disabled',
        permission: { '*': 'allow' },
        provider: {
          berth: {
            npm: '@ai-sdk/openai-compatible',
            name: 'berth model gateway',
            options: { baseURL: input.endpoints.openai, apiKey: '{env:BERTH_MODEL_TOKEN}' },
            models: { [input.model]: { name: input.model } },
          },
        },
        ...(input.mcpServers?.length
          ? {
              mcp: mcpEntries(input, (server) =>
                server.transport === 'stdio'
                  ? { type: 'local', command: [server.command, ...server.args] }
                  : { type: 'remote', url: server.url },
              ),
            }
          : {}),
      };
      return [
        'export XDG_CONFIG_HOME="$(mktemp -d "${TMPDIR:-/tmp}/berth-opencode.XXXXXX")"',
        'export XDG_DATA_HOME="$XDG_CONFIG_HOME/data" XDG_CACHE_HOME="$XDG_CONFIG_HOME/cache" XDG_STATE_HOME="$XDG_CONFIG_HOME/state"',
        'export OPENCODE_CONFIG="$XDG_CONFIG_HOME/opencode.json"',
        `printf '%s' ${shellQuote(JSON.stringify(config))} > "$OPENCODE_CONFIG"`,
        ...copySkills(input, '"$XDG_CONFIG_HOME/opencode/skills"'),
        'status=0',
        `${line([
          '"$BERTH_AGENT_HOME/bin/opencode"',
          'run',
          '--format',
          'json',
          '--model',
          `berth/${input.model}`,
          ...flags(input.options, { agent: (v) => ['--agent', v] }),
          '--',
          INSTRUCTION,
        ])} </dev/null || status=$?`,
        'rm -rf "$XDG_CONFIG_HOME"',
        'exit $status',
      ].join('\n');
    },
  },
  'qwen-code': {
    protocol: 'openai-chat',
    options: {
      max_turns: { description: 'most session turns (`--max-session-turns`)', integer: true },
    },
    env: (input) => ({
      OPENAI_BASE_URL: input.endpoints.openai,
      OPENAI_API_KEY: input.token,
      OPENAI_MODEL: input.model,
    }),
    script: (input) =>
      [
        'export QWEN_HOME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/berth-qwen.XXXXXX")"',
        'export HOME="$QWEN_HOME_DIR"',
        ...(input.mcpServers?.length
          ? [
              'mkdir -p "$HOME/.qwen"',
              `printf '%s' ${shellQuote(JSON.stringify({ mcpServers: mcpEntries(input, geminiMcpEntry) }))} > "$HOME/.qwen/settings.json"`,
            ]
          : []),
        ...copySkills(input, '"$HOME/.qwen/skills"'),
        'status=0',
        `${line([
          '"$BERTH_AGENT_HOME/bin/qwen"',
          '--yolo',
          '--auth-type',
          'openai',
          '--model',
          input.model,
          '--output-format',
          'stream-json',
          ...flags(input.options, { max_turns: (v) => ['--max-session-turns', v] }),
          '--prompt',
          INSTRUCTION,
        ])} </dev/null || status=$?`,
        'rm -rf "$QWEN_HOME_DIR"',
        'exit $status',
      ].join('\n'),
  },
};

/**
 * Checks `--ak` options against an agent's table.
 * @throws UsageError naming the option and the agent's known options
 */
export function checkOptions(name: InstalledAgentName, options: Readonly<Record<string, string>>): void {
  const table = RECIPES[name].options;
  for (const [key, value] of Object.entries(options)) {
    const option = table[key];
    if (!option)
      throw new UsageError(
        `--ak ${key}: ${name} has no option ${JSON.stringify(key)}; its options: ${Object.keys(table).join(', ') || '(none)'}`,
      );
    if (option.choices && !option.choices.includes(value))
      throw new UsageError(`--ak ${key}=${value}: ${name} takes one of ${option.choices.join(', ')}`);
    if (option.integer && !/^[1-9]\d*$/.test(value))
      throw new UsageError(`--ak ${key}=${value}: ${name} takes a whole number above 0`);
  }
}
