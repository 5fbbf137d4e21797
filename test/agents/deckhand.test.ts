/**
 * deckhand, berth's own coding agent, end to end: `berth run -a deckhand -m openai/...
 * --model-base-url` against the scripted model server (an OpenAI-compatible chat server)
 * on the bundled DockerLess sample. A script that issues the right commands resolves all
 * four instances, a wrong one none; tokens and cost in the results equal the script's;
 * trajectories are valid ATIF; the real key is nowhere in the job folder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { runReportSchema } from '../../src/reporters/json.ts';
import { fixturesDir } from '../helpers/data.ts';
import { rowOf, turn } from '../helpers/deckhand-job.ts';
import {
  type ReceivedRequest,
  type ScriptStep,
  startScriptedModelServer,
} from '../helpers/scripted-model-server.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const rows = readFileSync(sample, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, string>);
const KEY = 'sk-test-MARKER-0f9e8d7c6b5a';

/** The ATIF validator built from Harbor's own JSON Schema. */
function trajectoryValidator() {
  const schemaFile = join(fixturesDir, 'atif', 'Trajectory.schema.json');
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  return ajv.compile(schema);
}

function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

/** Usage the script reports for a call: input grows with the turn. */
const usageOf = (t: number) => ({ input: 1000 + 100 * t, output: 50 + t, cached: 200 });

/** Looks around, applies the gold patch with git apply, runs `env`, then finishes. */
function rightScript(request: ReceivedRequest): ScriptStep {
  const row = rowOf(request);
  const t = turn(request);
  const usage = usageOf(t);
  if (t === 0)
    return {
      reply: {
        text: 'Let me look.',
        toolCalls: [{ name: 'edit', input: { command: 'view', path: '.' } }],
        usage,
      },
    };
  if (t === 1)
    return {
      reply: {
        toolCalls: [
          {
            name: 'bash',
            input: {
              command: `git apply <<'BERTH_PATCH'\n${row.patch}BERTH_PATCH\ngit status --short && env`,
            },
          },
        ],
        usage,
      },
    };
  return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'applied the fix' } }], usage } };
}

/** Looks, writes a stray file, finishes: nothing fixed. */
function wrongScript(request: ReceivedRequest): ScriptStep {
  const t = turn(request);
  if (t === 0)
    return {
      reply: {
        toolCalls: [{ name: 'bash', input: { command: 'ls && echo hello > notes.txt' } }],
        usage: usageOf(t),
      },
    };
  return { reply: { text: 'I am done.', usage: usageOf(t) } };
}

async function berth(args: string[], env: Record<string, string> = {}) {
  const result = await execa('node', [bin, ...args], {
    reject: false,
    env: { ...process.env, CI: '1', OPENAI_API_KEY: KEY, ...env },
  });
  return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

describe('berth run -a deckhand', () => {
  it('resolves the four sample instances with a right script; tokens, cost and trajectories are recorded; the key stays out', async () => {
    const server = await startScriptedModelServer(rightScript);
    try {
      const jobs = await temp.make('berth-deckhand-');
      const run = await berth([
        'run',
        '-p',
        sample,
        '-a',
        'deckhand',
        '-m',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'right',
        '-n',
        '2',
        '--json',
      ]);
      expect(run.stderr).toContain('resolved 4/4');
      expect(run.code).toBe(0);
      const report = runReportSchema.parse(JSON.parse(run.stdout));
      expect(report.resolved).toBe(4);
      // Three calls a trial: input 1000+1100+1200 = 3300, cached 600, output 50+51+52 = 153.
      for (const trial of report.trials)
        expect(trial.model).toEqual({
          n_input_tokens: 3300,
          n_cache_tokens: 600,
          n_output_tokens: 153,
          cost_usd: expect.any(Number),
        });
      // gpt-4o: $2.5/M fresh input, $1.25/M cached, $10/M output.
      const perTrial = (2700 * 2.5 + 600 * 1.25 + 153 * 10) / 1e6;
      expect(report.trials[0]?.model?.cost_usd).toBeCloseTo(perTrial, 9);
      expect(report.model_usage).toMatchObject({
        n_input_tokens: 4 * 3300,
        n_output_tokens: 4 * 153,
        n_trials_cost_unknown: 0,
      });
      expect(report.model_usage?.cost_usd).toBeCloseTo(4 * perTrial, 9);
      expect(run.stderr).toMatch(/model: 13,200 tokens in \(2,400 cached\), 612 out; cost \$0\.0\d+/);
      expect(server.requests).toHaveLength(12);
      for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${KEY}`);

      const job = join(jobs, 'right');
      const jobResult = JSON.parse(readFileSync(join(job, 'result.json'), 'utf8'));
      expect(jobResult.stats).toMatchObject({
        n_input_tokens: 13200,
        n_cache_tokens: 2400,
        n_output_tokens: 612,
      });
      const validate = trajectoryValidator();
      for (const row of rows) {
        const trial = join(job, `${row.instance_id}__1`);
        const result = JSON.parse(readFileSync(join(trial, 'result.json'), 'utf8'));
        expect(result.agent_info).toMatchObject({
          name: 'deckhand',
          model_info: { name: 'gpt-4o', provider: 'openai' },
        });
        expect(result.agent_result).toMatchObject({
          n_input_tokens: 3300,
          n_cache_tokens: 600,
          n_output_tokens: 153,
          metadata: { stop_reason: 'finish', model_calls: 3 },
        });
        const trajectory = JSON.parse(readFileSync(join(trial, 'agent', 'trajectory.json'), 'utf8'));
        expect(validate(trajectory), JSON.stringify(validate.errors)).toBe(true);
        expect(trajectory.schema_version).toBe('ATIF-v1.7');
        const agentSteps = trajectory.steps.filter((s: { source: string }) => s.source === 'agent');
        expect(agentSteps).toHaveLength(3);
        expect(agentSteps[1].tool_calls[0].function_name).toBe('bash');
        expect(agentSteps[1].observation.results[0].content).toContain('[exit code 0]');
        expect(agentSteps[0].metrics).toMatchObject({
          prompt_tokens: 1000,
          completion_tokens: 50,
          cached_tokens: 200,
        });
        expect(trajectory.final_metrics).toMatchObject({
          total_prompt_tokens: 3300,
          total_completion_tokens: 153,
        });
        const calls = readFileSync(join(trial, 'model-calls.jsonl'), 'utf8').trim().split('\n');
        expect(calls).toHaveLength(3);
        const prediction = JSON.parse(readFileSync(join(trial, 'agent', 'prediction.json'), 'utf8'));
        expect(prediction.model_name_or_path).toBe('openai/gpt-4o');
      }
      // The key is in no file of the job; `env` in the environment showed no key either.
      const text = allText(job);
      expect(text).not.toContain(KEY);
      expect(text).toContain('PATH=');
    } finally {
      await server.close();
    }
  });

  it('resolves none with a wrong script; -a terminus-2 runs deckhand and says so', async () => {
    const server = await startScriptedModelServer(wrongScript);
    try {
      const jobs = await temp.make('berth-deckhand-');
      const run = await berth([
        'run',
        '-p',
        sample,
        '-i',
        'berth__toposort-1',
        '-i',
        'berth__csvline-1',
        '-a',
        'terminus-2',
        '--model',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'wrong',
      ]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain("-a terminus-2 runs berth's own coding agent, deckhand");
      expect(run.stdout).toContain('resolved 0/2');
      const result = JSON.parse(
        readFileSync(join(jobs, 'wrong', 'berth__toposort-1__1', 'result.json'), 'utf8'),
      );
      expect(result.agent_info.name).toBe('deckhand');
      expect(result.agent_result.metadata).toMatchObject({
        stop_reason: 'no_tool_call',
        requested_as: 'terminus-2',
      });
      const trajectory = JSON.parse(
        readFileSync(join(jobs, 'wrong', 'berth__toposort-1__1', 'agent', 'trajectory.json'), 'utf8'),
      );
      expect(trajectory.agent).toMatchObject({ name: 'deckhand', extra: { requested_as: 'terminus-2' } });
    } finally {
      await server.close();
    }
  });

  it('stops at the agent timeout, records AgentTimeoutError, and grades what it left', async () => {
    // Applies the gold patch, then runs a command that outlives the agent timeout.
    const script = (request: ReceivedRequest): ScriptStep => {
      const t = turn(request);
      if (t === 0)
        return {
          reply: {
            toolCalls: [
              {
                name: 'bash',
                input: { command: `git apply <<'BERTH_PATCH'\n${rowOf(request).patch}BERTH_PATCH` },
              },
            ],
          },
        };
      return { reply: { toolCalls: [{ name: 'bash', input: { command: 'sleep 60', timeout_sec: 600 } }] } };
    };
    const server = await startScriptedModelServer(script);
    try {
      const jobs = await temp.make('berth-deckhand-');
      const started = Date.now();
      const run = await berth([
        'run',
        '-p',
        sample,
        '-i',
        'berth__toposort-1',
        '-a',
        'deckhand',
        '-m',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--agent-timeout',
        '8',
        '--jobs-dir',
        jobs,
        '--job-name',
        'timeout',
      ]);
      expect(run.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(50_000);
      const result = JSON.parse(
        readFileSync(join(jobs, 'timeout', 'berth__toposort-1__1', 'result.json'), 'utf8'),
      );
      expect(result.exception_info.exception_type).toBe('AgentTimeoutError');
      // The fix it applied before the timeout is graded (as Harbor still runs the verifier).
      expect(result.berth.resolved).toBe(true);
      expect(result.agent_result.metadata.stop_reason).toBe('timeout');
    } finally {
      await server.close();
    }
  });

  it('the job budget stops further calls and trials; a missing key or a bad name is exit 2 before anything runs', async () => {
    const server = await startScriptedModelServer(rightScript);
    try {
      const jobs = await temp.make('berth-deckhand-');
      // $2.5/M input: the first call's input alone (its hold, budget12) costs more than $0.002,
      // so the gateway refuses it and the job's budget counts as spent.
      const run = await berth([
        'run',
        '-p',
        sample,
        '-a',
        'deckhand',
        '-m',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--model-budget',
        '0.002',
        '--jobs-dir',
        jobs,
        '--job-name',
        'budget',
      ]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain("the job's model budget is spent");
      expect(run.stdout).toMatch(/model budget spent: 3 trial\(s\) not started/);
      // The first trial's first call was refused before it reached the model; none after.
      expect(server.requests).toHaveLength(0);
      const result = JSON.parse(
        readFileSync(join(jobs, 'budget', 'berth__csvline-1__1', 'result.json'), 'utf8'),
      );
      expect(result.agent_result.metadata.stop_reason).toBe('model_limit');

      const noKey = await berth(
        ['run', '-p', sample, '-a', 'deckhand', '-m', 'openai/gpt-4o', '--jobs-dir', jobs],
        { OPENAI_API_KEY: '' },
      );
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toContain('no key for openai; set OPENAI_API_KEY or pass --env-file FILE');
      const bare = await berth(['run', '-p', sample, '-a', 'deckhand', '-m', 'gpt-4o', '--jobs-dir', jobs]);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('write PROVIDER/NAME');
      const none = await berth(['run', '-p', sample, '-a', 'deckhand', '--jobs-dir', jobs]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('give one with -m PROVIDER/NAME');
    } finally {
      await server.close();
    }
  });
});
