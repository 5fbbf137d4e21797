/**
 * Command lines for well-known CLI agents that Harbor ships as installed agents
 * (`src/harbor/agents/installed/*.py`). berth has no built-in wrapper for them:
 * it runs each through the `command` agent. These recipes follow the vendors'
 * documented headless modes and Harbor's invocations; berth's tests do not run
 * them (no model can be reached offline), so treat them as starting points.
 */
import { shellQuote } from '../util/shell.ts';

export interface CliAgentRecipe {
  /** Harbor's agent name (`-a NAME` there). */
  name: string;
  /** Set-up command (`--agent-setup`). */
  setup: string;
  /** Agent command (`--agent-command`). */
  command: string;
  /** Variables the agent needs (`--agent-env NAME` copies the value from berth's environment). */
  env: string[];
  /** Example model name (`--model`). */
  model: string;
  note?: string;
}

const INSTRUCTION = '"$(cat "$BERTH_INSTRUCTION_FILE")"';

/** The recipes, by Harbor's agent name. */
export const CLI_AGENT_RECIPES: readonly CliAgentRecipe[] = [
  {
    name: 'claude-code',
    setup: 'npm install -g @anthropic-ai/claude-code',
    command: `claude --print --verbose --output-format=stream-json --permission-mode=bypassPermissions --model "$BERTH_MODEL" -- ${INSTRUCTION}`,
    env: ['ANTHROPIC_API_KEY', 'IS_SANDBOX=1'],
    model: 'claude-sonnet-4-5',
    note: 'IS_SANDBOX=1 lets bypassPermissions run as root in a container, as Harbor sets it',
  },
  {
    name: 'codex',
    setup: 'npm install -g @openai/codex',
    command: `codex exec --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check --model "$BERTH_MODEL" ${INSTRUCTION}`,
    env: ['OPENAI_API_KEY'],
    model: 'gpt-5-codex',
  },
  {
    name: 'aider',
    setup: 'python3 -m pip install aider-chat',
    command:
      'aider --yes-always --no-auto-commits --model "$BERTH_MODEL" --message-file "$BERTH_INSTRUCTION_FILE"',
    env: ['OPENAI_API_KEY'],
    model: 'gpt-4o',
  },
  {
    name: 'gemini-cli',
    setup: 'npm install -g @google/gemini-cli',
    command: `gemini --yolo --model "$BERTH_MODEL" --prompt ${INSTRUCTION}`,
    env: ['GEMINI_API_KEY'],
    model: 'gemini-2.5-pro',
  },
  {
    name: 'mini-swe-agent',
    setup: 'python3 -m pip install mini-swe-agent',
    command: `mini-swe-agent --yolo --exit-immediately --model "$BERTH_MODEL" --task ${INSTRUCTION}`,
    env: ['ANTHROPIC_API_KEY'],
    model: 'anthropic/claude-sonnet-4-5',
  },
  {
    name: 'openhands',
    setup: 'python3 -m pip install openhands-ai',
    command: `LLM_MODEL="$BERTH_MODEL" python3 -m openhands.core.main --task ${INSTRUCTION}`,
    env: ['LLM_API_KEY'],
    model: 'anthropic/claude-sonnet-4-5',
    note: 'OpenHands starts its own sandbox by default; see its headless-mode docs for running in place',
  },
  {
    name: 'opencode',
    setup: 'npm install -g opencode-ai',
    command: `opencode run --model "$BERTH_MODEL" ${INSTRUCTION}`,
    env: ['ANTHROPIC_API_KEY'],
    model: 'anthropic/claude-sonnet-4-5',
  },
  {
    name: 'goose',
    setup:
      'curl -fsSL https://github.com/block/goose/releases/download/stable/download_cli.sh | CONFIGURE=false bash',
    command: 'goose run --instructions "$BERTH_INSTRUCTION_FILE"',
    env: ['GOOSE_PROVIDER=anthropic', 'GOOSE_MODEL=claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
    model: 'claude-sonnet-4-5',
  },
  {
    name: 'qwen-coder',
    setup: 'npm install -g @qwen-code/qwen-code',
    command: `qwen --yolo --prompt ${INSTRUCTION}`,
    env: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL=qwen3-coder-plus'],
    model: 'qwen3-coder-plus',
  },
  {
    name: 'swe-agent',
    setup: '',
    command: '',
    env: [],
    model: '',
    note: 'SWE-agent manages its own containers; run it with its own CLI, then grade the predictions it writes:',
  },
];

/** The `berth run` command line for a recipe. */
export function recipeCommandLine(recipe: CliAgentRecipe, dataset = 'DATASET'): string {
  if (recipe.command === '') return `berth run -p ${dataset} -a predictions --predictions PREDICTIONS_FILE`;
  const parts = [`berth run -p ${dataset} -a command`];
  if (recipe.setup) parts.push(`--agent-setup ${shellQuote(recipe.setup)}`);
  parts.push(`--agent-command ${shellQuote(recipe.command)}`);
  for (const variable of recipe.env) parts.push(`--agent-env ${variable}`);
  if (recipe.model) parts.push(`--model ${recipe.model}`);
  return parts.join(' \\\n    ');
}

/** The message for `-a NAME` when NAME is a CLI agent berth runs through `-a command`, else undefined. */
export function cliAgentHint(name: string): string | undefined {
  const recipe = CLI_AGENT_RECIPES.find((r) => r.name === name);
  if (!recipe) return undefined;
  if (recipe.command === '')
    return [
      `no built-in ${JSON.stringify(name)} agent: ${recipe.note ?? ''}`,
      `  ${recipeCommandLine(recipe)}`,
    ].join('\n');
  return [
    `no built-in ${JSON.stringify(name)} agent: berth runs CLI agents through \`-a command\`, e.g. (untested recipe, adjust to your setup):`,
    `  ${recipeCommandLine(recipe)}`,
    ...(recipe.note ? [`  note: ${recipe.note}`] : []),
    '  --agent-env NAME copies NAME from your environment; see docs/running-swebench.md (Agents).',
  ].join('\n');
}
