/**
 * A job of berth's own agent, deckhand, against the scripted model server: a real trajectory,
 * tokens and cost per trial. The script solves two of the sample's instances (it applies their
 * gold patch) and fumbles the other two (it writes a stray file and stops), so the job has
 * resolved and failed trials, each with its `agent/trajectory.json`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { bin, sample } from './jobs.ts';
import { type ReceivedRequest, type ScriptStep, startScriptedModelServer } from './scripted-model-server.ts';

/** The sample's rows (instance_id, problem_statement, patch, ...). */
const rows = readFileSync(sample, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, string>);

/** Instances the script solves. */
export const SOLVED = new Set(['berth__csvline-1', 'berth__toposort-1']);

/** The sample row whose problem statement the request's task message holds. */
export function rowOf(request: ReceivedRequest): Record<string, string> {
  const text = JSON.stringify(request.body.messages);
  const row = rows.find((r) => text.includes(JSON.stringify(r.problem_statement).slice(1, 60)));
  if (!row) throw new Error('no row matches the request');
  return row;
}

/** How many tool results the request carries (the agent's step). */
export const turn = (request: ReceivedRequest) =>
  (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length;

function script(request: ReceivedRequest): ScriptStep {
  const row = rowOf(request);
  const t = turn(request);
  const usage = { input: 1200 + 150 * t, output: 60 + 5 * t, cached: 300 };
  const cost = 0.001 * (t + 1);
  if (t === 0)
    return {
      reply: {
        text: 'Let me look at the repository.',
        toolCalls: [{ name: 'bash', input: { command: 'ls && git log --oneline | head -3' } }],
        usage,
        cost,
      },
    };
  if (t === 1 && SOLVED.has(row.instance_id as string))
    return {
      reply: {
        text: 'The fix is clear; applying it.',
        toolCalls: [
          {
            name: 'bash',
            input: { command: `git apply <<'BERTH_PATCH'\n${row.patch}BERTH_PATCH\ngit status --short` },
          },
        ],
        usage,
        cost,
      },
    };
  if (t === 1)
    return {
      reply: {
        text: 'I will leave a note.',
        toolCalls: [{ name: 'bash', input: { command: 'echo todo > NOTES.txt' } }],
        usage,
        cost,
      },
    };
  return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'done' } }], usage, cost } };
}

/**
 * `berth run` arguments for deckhand on the sample against the scripted model server at
 * `serverUrl`, writing `jobsDir/jobName`.
 */
export function deckhandArgs(serverUrl: string, jobsDir: string, jobName: string): string[] {
  return [
    '-p',
    sample,
    '-a',
    'deckhand',
    '-m',
    'openrouter/scripted/model',
    '--model-base-url',
    `${serverUrl}/v1`,
    '--jobs-dir',
    jobsDir,
    '--job-name',
    jobName,
  ];
}

/** Runs deckhand on the sample in `jobsDir/jobName` and returns the job folder. */
export async function runDeckhandJob(jobsDir: string, jobName: string): Promise<string> {
  const server = await startScriptedModelServer(script);
  try {
    const run = await execa('node', [bin, 'run', ...deckhandArgs(server.url, jobsDir, jobName), '-n', '2'], {
      reject: false,
      env: { ...process.env, CI: '1', OPENROUTER_API_KEY: 'sk-test-report-0000' },
    });
    if (run.exitCode !== 0)
      throw new Error(`berth run -a deckhand exited ${run.exitCode}:\n${run.stdout}\n${run.stderr}`);
    return join(jobsDir, jobName);
  } finally {
    await server.close();
  }
}
