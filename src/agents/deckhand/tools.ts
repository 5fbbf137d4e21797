/**
 * deckhand's tools, run in the task's environment through `Environment.exec`
 * (so the same agent works in a local sandbox and in a container):
 *
 * - `bash`: one command line in a fresh shell in the working folder;
 * - `edit`: view a file or folder, create a file, replace one exact string,
 *   insert lines (the file's bytes move through the command's standard input
 *   and output, never through a shell-quoted argument);
 * - `finish`: ends the run.
 *
 * Every observation is cut to a bound (head and tail kept, the cut said in the
 * text), so one noisy command cannot fill the model's window.
 */
import type { JSONSchema7, LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import type { Environment } from '../../environments/environment.ts';
import { shellQuote } from '../../util/shell.ts';

export const TOOL_DEFINITIONS: LanguageModelV3FunctionTool[] = [
  {
    type: 'function',
    name: 'bash',
    description:
      'Run one bash command line in the task environment, in the working folder. Each call starts a fresh shell: `cd` and variables do not carry over (chain with &&). stdout and stderr come back together with the exit code; long output is cut in the middle. Commands are stopped after timeout_sec (default 120, at most 900). Nothing is interactive: pass flags such as -y, and never start editors or pagers.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line.' },
        timeout_sec: { type: 'integer', description: 'Time limit in seconds (default 120).' },
      },
      required: ['command'],
      additionalProperties: false,
    } as JSONSchema7,
  },
  {
    type: 'function',
    name: 'edit',
    description:
      'View and change files. `view`: a file with line numbers (optionally view_range [first, last]) or a folder two levels deep. `create`: write file_text to path (parents are made; an existing file is replaced). `str_replace`: replace old_str, which must occur exactly once in the file, by new_str (include enough surrounding lines to make it unique; whitespace counts). `insert`: put new_str after line insert_line (0 for the top). Paths are relative to the working folder or absolute.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert'] },
        path: { type: 'string' },
        file_text: { type: 'string' },
        old_str: { type: 'string' },
        new_str: { type: 'string' },
        insert_line: { type: 'integer' },
        view_range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
      },
      required: ['command', 'path'],
      additionalProperties: false,
    } as JSONSchema7,
  },
  {
    type: 'function',
    name: 'finish',
    description:
      'Call this once the task is done (or cannot be done): it ends your work. Give a short summary of what you changed and how you checked it.',
    inputSchema: {
      type: 'object',
      properties: { summary: { type: 'string' } },
      required: ['summary'],
      additionalProperties: false,
    } as JSONSchema7,
  },
];

/** What one tool call came to. */
export interface ToolOutcome {
  /** The text the model sees. */
  content: string;
  /** Whether the call failed (a bad argument, a non-zero exit is not a failure). */
  isError: boolean;
  /** Characters cut out of the output, 0 when none. */
  cut: number;
  /** The run ends (`finish`). */
  finished?: boolean;
}

/** Keeps the head and tail of `text` within `max` characters, saying how much was cut. */
export function boundText(text: string, max: number): { text: string; cut: number } {
  if (text.length <= max) return { text, cut: 0 };
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  const cut = text.length - head - tail;
  return {
    text: `${text.slice(0, head)}\n[... ${cut} characters cut by berth to keep the context small ...]\n${text.slice(-tail)}`,
    cut,
  };
}

export interface ToolContext {
  environment: Environment;
  /** Seconds left before the agent timeout (commands get at most this). */
  secondsLeft: () => number;
  /** Longest observation, in characters. */
  maxObservationChars: number;
  signal?: AbortSignal;
}

function argString(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  return typeof value === 'string' ? value : undefined;
}

function fail(content: string): ToolOutcome {
  return { content, isError: true, cut: 0 };
}

async function run(
  context: ToolContext,
  command: string,
  options: { timeoutSec?: number; input?: string } = {},
) {
  const limit = Math.max(1, Math.min(options.timeoutSec ?? 120, 900, context.secondsLeft()));
  return context.environment.exec(command, {
    timeoutSec: limit,
    maxOutputBytes: 8 * 1024 * 1024,
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
  });
}

/** Runs one tool call. Never throws for what the model asked (errors are observations). */
export async function runTool(
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutcome> {
  if (name === 'finish') return { content: 'Finished.', isError: false, cut: 0, finished: true };
  if (name === 'bash') {
    const command = argString(args, 'command');
    if (!command || command.trim() === '') return fail('bash needs a non-empty `command`.');
    const timeout = typeof args.timeout_sec === 'number' && args.timeout_sec > 0 ? args.timeout_sec : 120;
    const result = await run(context, command, { timeoutSec: timeout });
    const status = result.timedOut
      ? `[the command was stopped after ${Math.round(result.durationSec)} s]`
      : result.oomKilled
        ? '[the command ran out of memory]'
        : `[exit code ${result.exitCode ?? result.signal}]`;
    const bounded = boundText(result.output, context.maxObservationChars);
    return {
      content: `${bounded.text}${bounded.text.endsWith('\n') || bounded.text === '' ? '' : '\n'}${status}`,
      isError: false,
      cut: bounded.cut,
    };
  }
  if (name === 'edit') return edit(args, context);
  return fail(`There is no tool ${JSON.stringify(name)}; use bash, edit or finish.`);
}

async function readFileText(context: ToolContext, path: string): Promise<string | ToolOutcome> {
  const result = await run(
    context,
    `if [ -f ${shellQuote(path)} ]; then cat -- ${shellQuote(path)}; else echo "no such file: ${path.replace(/[`$"\\]/g, '')}" >&2; exit 3; fi`,
    { timeoutSec: 60 },
  );
  if (result.exitCode !== 0) return fail(result.output.trim() || `cannot read ${path}`);
  if (result.truncated)
    return fail(`${path} is too large to edit with this tool; use bash (sed, python, ...) instead.`);
  return result.output;
}

async function writeFileText(
  context: ToolContext,
  path: string,
  text: string,
): Promise<ToolOutcome | undefined> {
  const result = await run(
    context,
    `mkdir -p -- "$(dirname -- ${shellQuote(path)})" && cat > ${shellQuote(path)}`,
    {
      timeoutSec: 60,
      input: text,
    },
  );
  if (result.exitCode !== 0) return fail(`cannot write ${path}: ${result.output.trim()}`);
  return undefined;
}

function numbered(text: string, first: number): string {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join('\n');
}

async function edit(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
  const command = argString(args, 'command');
  const path = argString(args, 'path');
  if (!path) return fail('edit needs a `path`.');
  if (command === 'view') {
    const kind = await run(
      context,
      `if [ -d ${shellQuote(path)} ]; then echo dir; elif [ -f ${shellQuote(path)} ]; then echo file; else echo none; fi`,
      { timeoutSec: 30 },
    );
    const what = kind.output.trim();
    if (what === 'dir') {
      const listing = await run(
        context,
        `find ${shellQuote(path)} -maxdepth 2 -not -path '*/.git' -not -path '*/.git/*' | sort | head -n 400`,
        { timeoutSec: 60 },
      );
      const bounded = boundText(listing.output, context.maxObservationChars);
      return { content: bounded.text, isError: false, cut: bounded.cut };
    }
    if (what !== 'file') return fail(`no such file or folder: ${path}`);
    const text = await readFileText(context, path);
    if (typeof text !== 'string') return text;
    const range = Array.isArray(args.view_range) ? (args.view_range as number[]) : undefined;
    const lines = text.split('\n');
    const first = range ? Math.max(1, Number(range[0]) || 1) : 1;
    const last = range && Number(range[1]) > 0 ? Math.min(lines.length, Number(range[1])) : lines.length;
    const bounded = boundText(
      numbered(lines.slice(first - 1, last).join('\n'), first),
      context.maxObservationChars,
    );
    return { content: bounded.text, isError: false, cut: bounded.cut };
  }
  if (command === 'create') {
    const text = argString(args, 'file_text');
    if (text === undefined) return fail('create needs `file_text`.');
    return (
      (await writeFileText(context, path, text)) ?? {
        content: `Wrote ${path} (${text.length} characters).`,
        isError: false,
        cut: 0,
      }
    );
  }
  if (command === 'str_replace') {
    const oldStr = argString(args, 'old_str');
    const newStr = argString(args, 'new_str') ?? '';
    if (oldStr === undefined || oldStr === '') return fail('str_replace needs a non-empty `old_str`.');
    const text = await readFileText(context, path);
    if (typeof text !== 'string') return text;
    const count = text.split(oldStr).length - 1;
    if (count === 0)
      return fail(
        `old_str does not occur in ${path}; view the file and copy the text exactly (whitespace counts).`,
      );
    if (count > 1) {
      const lines = text
        .split('\n')
        .flatMap((line, i) => (line.includes(oldStr.split('\n')[0] ?? '') ? [i + 1] : []));
      return fail(
        `old_str occurs ${count} times in ${path} (lines ${lines.slice(0, 10).join(', ')}); include more lines to make it unique.`,
      );
    }
    const index = text.indexOf(oldStr);
    const updated = text.slice(0, index) + newStr + text.slice(index + oldStr.length);
    const failed = await writeFileText(context, path, updated);
    if (failed) return failed;
    const line = text.slice(0, index).split('\n').length;
    const snippet = updated.split('\n').slice(Math.max(0, line - 4), line + newStr.split('\n').length + 3);
    const bounded = boundText(
      numbered(snippet.join('\n'), Math.max(1, line - 3)),
      context.maxObservationChars,
    );
    return {
      content: `Replaced in ${path}. The lines around the change:\n${bounded.text}`,
      isError: false,
      cut: bounded.cut,
    };
  }
  if (command === 'insert') {
    const newStr = argString(args, 'new_str');
    const at = typeof args.insert_line === 'number' ? args.insert_line : undefined;
    if (newStr === undefined || at === undefined) return fail('insert needs `new_str` and `insert_line`.');
    const text = await readFileText(context, path);
    if (typeof text !== 'string') return text;
    const lines = text.split('\n');
    if (at < 0 || at > lines.length) return fail(`insert_line must be between 0 and ${lines.length}.`);
    lines.splice(at, 0, ...newStr.replace(/\n$/, '').split('\n'));
    return (
      (await writeFileText(context, path, lines.join('\n'))) ?? {
        content: `Inserted after line ${at} of ${path}.`,
        isError: false,
        cut: 0,
      }
    );
  }
  return fail('edit `command` must be one of view, create, str_replace, insert.');
}
