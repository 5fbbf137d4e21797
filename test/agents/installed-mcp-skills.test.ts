// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell variables in the stub CLIs
/**
 * The task's MCP servers and skills reach each installed agent where that agent reads them
 * (Harbor's `_build_register_mcp_servers_command` / `_build_register_skills_command` per
 * agent): the recipes' real shell scripts run in bash with a stub in place of each CLI that
 * copies out the configuration it was given.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import type { InstalledAgentName } from '../../src/agents/installed/packages.ts';
import { endpointsAt, RECIPES, type RecipeInput } from '../../src/agents/installed/recipes.ts';
import type { McpServer } from '../../src/tasks/task.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const SERVERS: McpServer[] = [
  { name: 'mcp-server', transport: 'streamable-http', url: 'http://mcp-server:8000/mcp', args: [] },
  { name: 'events', transport: 'sse', url: 'http://events:9000/sse', args: [] },
  { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'files-mcp', '/app'] },
];

/** What each stub CLI copies out: its configuration file and its skills folder. */
const STUBS: Record<InstalledAgentName, { bin: string; config: string; skills: string }> = {
  'claude-code': {
    bin: 'claude',
    config: '$CLAUDE_CONFIG_DIR/.claude.json',
    skills: '$CLAUDE_CONFIG_DIR/skills',
  },
  codex: { bin: 'codex', config: '$CODEX_HOME/config.toml', skills: '$HOME/.agents/skills' },
  'gemini-cli': {
    bin: 'gemini',
    config: '$GEMINI_CLI_HOME/.gemini/settings.json',
    skills: '$GEMINI_CLI_HOME/.gemini/skills',
  },
  opencode: { bin: 'opencode', config: '$OPENCODE_CONFIG', skills: '$XDG_CONFIG_HOME/opencode/skills' },
  'qwen-code': { bin: 'qwen', config: '$HOME/.qwen/settings.json', skills: '$HOME/.qwen/skills' },
};

async function runRecipe(
  name: InstalledAgentName,
  input: Partial<RecipeInput>,
): Promise<{ config: string; skills: string[] }> {
  const root = await temp.make('berth-recipe-');
  const home = join(root, 'agent-home');
  const out = join(root, 'out');
  const logs = join(root, 'logs');
  const skillsIn = join(root, 'skills');
  for (const d of [join(home, 'bin'), out, logs, join(root, 'home'), join(skillsIn, 'greeting')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(skillsIn, 'greeting', 'SKILL.md'), '---\nname: greeting\n---\nSay hello.\n');
  writeFileSync(join(root, 'instruction.md'), 'do it');
  const stub = STUBS[name];
  writeFileSync(
    join(home, 'bin', stub.bin),
    `#!/bin/bash\ncp "${stub.config}" "${out}/config" 2>/dev/null\nls -R "${stub.skills}" > "${out}/skills" 2>/dev/null\nexit 0\n`,
  );
  chmodSync(join(home, 'bin', stub.bin), 0o755);
  const recipeInput: RecipeInput = {
    endpoints: endpointsAt('http://127.0.0.1:9'),
    token: 'tok',
    model: 'm',
    options: {},
    ...input,
    ...(input.skillsDir ? { skillsDir: skillsIn } : {}),
  };
  const recipe = RECIPES[name];
  await execa('bash', ['-c', recipe.script(recipeInput)], {
    cwd: root,
    env: {
      ...recipe.env(recipeInput),
      PATH: process.env.PATH,
      HOME: join(root, 'home'),
      BERTH_AGENT_HOME: home,
      BERTH_AGENT_LOG_DIR: logs,
      BERTH_INSTRUCTION_FILE: join(root, 'instruction.md'),
      TMPDIR: root,
    },
    extendEnv: false,
  });
  const read = (f: string) => {
    try {
      return readFileSync(join(out, f), 'utf8');
    } catch {
      return '';
    }
  };
  return { config: read('config'), skills: read('skills').split(/\s+/).filter(Boolean) };
}

describe('installed agents get the task’s MCP servers and skills', () => {
  it('Claude Code: user-scoped .claude.json (http, sse, stdio) and $CLAUDE_CONFIG_DIR/skills', async () => {
    const { config, skills } = await runRecipe('claude-code', { mcpServers: SERVERS, skillsDir: 'x' });
    expect(JSON.parse(config)).toEqual({
      mcpServers: {
        'mcp-server': { type: 'http', url: 'http://mcp-server:8000/mcp' },
        events: { type: 'sse', url: 'http://events:9000/sse' },
        files: { type: 'stdio', command: 'npx', args: ['-y', 'files-mcp', '/app'] },
      },
    });
    expect(skills).toContain('SKILL.md');
  });

  it('Codex: [mcp_servers."name"] tables in config.toml beside the gateway provider', async () => {
    const { config, skills } = await runRecipe('codex', { mcpServers: SERVERS, skillsDir: 'x' });
    expect(config).toContain('[model_providers.berth]');
    expect(config).toContain('[mcp_servers."mcp-server"]\nurl = "http://mcp-server:8000/mcp"');
    expect(config).toContain('[mcp_servers."files"]\ncommand = "npx"\nargs = ["-y","files-mcp","/app"]');
    expect(skills).toContain('SKILL.md');
  });

  it('Gemini CLI and Qwen Code: mcpServers with httpUrl for streamable HTTP', async () => {
    for (const name of ['gemini-cli', 'qwen-code'] as const) {
      const { config, skills } = await runRecipe(name, { mcpServers: SERVERS, skillsDir: 'x' });
      expect(JSON.parse(config).mcpServers).toEqual({
        'mcp-server': { httpUrl: 'http://mcp-server:8000/mcp' },
        events: { url: 'http://events:9000/sse' },
        files: { command: 'npx', args: ['-y', 'files-mcp', '/app'] },
      });
      expect(skills).toContain('SKILL.md');
    }
  });

  it('opencode: mcp remote/local entries in opencode.json', async () => {
    const { config, skills } = await runRecipe('opencode', { mcpServers: SERVERS, skillsDir: 'x' });
    expect(JSON.parse(config).mcp).toEqual({
      'mcp-server': { type: 'remote', url: 'http://mcp-server:8000/mcp' },
      events: { type: 'remote', url: 'http://events:9000/sse' },
      files: { type: 'local', command: ['npx', '-y', 'files-mcp', '/app'] },
    });
    expect(skills).toContain('SKILL.md');
  });

  it('a task without MCP servers or skills changes nothing', async () => {
    const { config, skills } = await runRecipe('claude-code', {});
    expect(config).toBe('');
    expect(skills).toEqual([]);
    const codex = await runRecipe('codex', {});
    expect(codex.config).not.toContain('mcp_servers');
  });

  it('a hostile skills_dir name cannot break out of the shell line', async () => {
    const script = RECIPES['claude-code'].script({
      endpoints: endpointsAt('http://127.0.0.1:9'),
      token: 't',
      model: 'm',
      options: {},
      skillsDir: '/skills"; touch /tmp/pwned; echo "',
    });
    expect(script).toContain(`'/skills"; touch /tmp/pwned; echo "'/.`);
  });
});
