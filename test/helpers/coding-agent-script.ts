/**
 * A script for the scripted model server that drives a real coding-agent CLI (Claude Code,
 * Codex, Gemini CLI, opencode, Qwen Code) through one small task: write a file with the
 * agent's own file tool (its shell where it has none), run a command with its shell tool,
 * then finish. Each request is answered from its own history (how many tool results it
 * carries), so the CLIs' side calls (titles, summaries, tool-less checks) get a plain text
 * answer and never disturb the steps.
 */
import type { LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import type { ReceivedRequest, Script, ScriptStep } from './scripted-model-server.ts';

/** Shell tools of the five CLIs, and the argument holding the command. */
const SHELL_TOOLS: Record<string, string> = {
  Bash: 'command', // Claude Code
  exec_command: 'cmd', // Codex
  shell: 'command', // Codex (older)
  run_shell_command: 'command', // Gemini CLI, Qwen Code
  bash: 'command', // opencode
};
/** File-writing tools, and their path and content arguments. */
const WRITE_TOOLS: Record<string, { path: string; content: string }> = {
  Write: { path: 'file_path', content: 'content' }, // Claude Code
  write_file: { path: 'file_path', content: 'content' }, // Gemini CLI, Qwen Code
  write: { path: 'filePath', content: 'content' }, // opencode
};

export interface EditAndRun {
  /**
   * The file to write and its content: an absolute path goes through the agent's file tool, a
   * relative one (the working folder unknown in advance) through its shell.
   */
  file: { path: string; content: string };
  /** Shell command to run after the write. */
  command: string;
  /** Usage each reply reports. */
  usage?: { input: number; output: number };
}

function toolsOf(request: ReceivedRequest): LanguageModelV3FunctionTool[] {
  return (request.parsed.call.tools ?? []).filter(
    (t): t is LanguageModelV3FunctionTool => t.type === 'function',
  );
}

/** Tool results in the request's history. */
function toolResults(request: ReceivedRequest): number {
  let n = 0;
  for (const message of request.parsed.call.prompt) {
    if (message.role === 'tool') n += message.content.filter((p) => p.type === 'tool-result').length;
  }
  return n;
}

/** Fills the tool's required string arguments the step does not set (opencode's `description`). */
function withRequired(
  tool: LanguageModelV3FunctionTool,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const schema = tool.inputSchema as { required?: string[]; properties?: Record<string, { type?: string }> };
  const out = { ...input };
  for (const name of schema.required ?? []) {
    if (out[name] === undefined && schema.properties?.[name]?.type === 'string')
      out[name] = 'berth scripted step';
  }
  return out;
}

/** The script: (read the file, where the agent must before writing,) write it, run the command, say done. */
export function editAndRunScript(plan: EditAndRun): Script {
  return (request: ReceivedRequest): ScriptStep => {
    const usage = plan.usage ?? { input: 100, output: 20 };
    const tools = toolsOf(request);
    const shell = tools.find((t) => t.name in SHELL_TOOLS);
    if (!shell) return { reply: { text: 'ok', usage } };
    const write = plan.file.path.startsWith('/') ? tools.find((t) => t.name in WRITE_TOOLS) : undefined;
    const shellCall = (command: string) => ({
      name: shell.name,
      input: withRequired(shell, { [SHELL_TOOLS[shell.name] as string]: command }),
    });
    const calls: Array<{ text: string; call: { name: string; input: Record<string, unknown> } }> = [];
    // Claude Code's Write and Qwen Code's write_file refuse a file not read in the session.
    const read = tools.find((t) => t.name === 'Read' || t.name === 'read_file');
    if (read && write) {
      const props = Object.keys((read.inputSchema as { properties?: object }).properties ?? {});
      const pathArg = ['file_path', 'absolute_path', 'path'].find((p) => props.includes(p)) ?? 'file_path';
      calls.push({
        text: 'I read the file first.',
        call: { name: read.name, input: withRequired(read, { [pathArg]: plan.file.path }) },
      });
    }
    calls.push({
      text: 'I will write the file.',
      call: write
        ? {
            name: write.name,
            input: withRequired(write, {
              [(WRITE_TOOLS[write.name] as { path: string }).path]: plan.file.path,
              [(WRITE_TOOLS[write.name] as { content: string }).content]: plan.file.content,
            }),
          }
        : shellCall(`cat > '${plan.file.path}' <<'BERTH_EOF'\n${plan.file.content}BERTH_EOF`),
    });
    calls.push({ text: 'Now I run the command.', call: shellCall(plan.command) });
    const next = calls[toolResults(request)];
    if (!next) return { reply: { text: 'Done: the file is written and the command ran.', usage } };
    return {
      reply: { text: next.text, toolCalls: [{ id: `call_${toolResults(request)}`, ...next.call }], usage },
    };
  };
}
