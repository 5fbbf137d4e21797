/**
 * The five installed agents run for real: each CLI, installed from the cache into the bundled
 * `no-network` task's image, is driven through berth's model gateway by the scripted model
 * server (the gateway passes each call through to it in the CLI's own protocol). The script
 * makes the agent write a file and run a command: reward 1; with a wrong file, reward 0.
 *
 * Claude Code's and Codex's solved trials go through `berth run` (`-a NAME -m MODEL
 * --model-base-url`, the key in the environment): the relay on the gateway socket as the CLI
 * sets it up, and the real key seen by the upstream only, in no file of the job.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { InstalledAgent } from '../../src/agents/installed/agent.ts';
import { AGENT_PACKAGES, type InstalledAgentName } from '../../src/agents/installed/packages.ts';
import { RECIPES } from '../../src/agents/installed/recipes.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { modelEndpointFor } from '../../src/models/access.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { type ModelTarget, resolveModel } from '../../src/models/providers.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { HarborVerifier } from '../../src/verifiers/harbor.ts';
import { trajectoryValidator } from '../helpers/atif.ts';
import { editAndRunScript } from '../helpers/coding-agent-script.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { BASE_IMAGE, fixtureImageMap, JOB_ID, skipDocker, tempDir } from './helpers.ts';

const TASK_DIR = join(import.meta.dirname, '..', '..', 'examples', 'agents', 'edit-and-run');
const KEY = 'sk-real-key-MARKER-4b1d';
const COMMAND_MARK = 'cd /app && ./record.sh';
const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
/** Agents whose solved trial goes through `berth run`, with the model as `-m` and `--model-base-url` take it. */
const THROUGH_CLI: Partial<Record<InstalledAgentName, { model: string; base: string }>> = {
  'claude-code': { model: 'anthropic/claude-sonnet-4-5', base: '' },
  codex: { model: 'openai/gpt-5', base: '/v1' },
};
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** The upstream model, in the CLI's own protocol (the gateway passes the calls through). */
function target(name: InstalledAgentName, url: string): ModelTarget {
  switch (RECIPES[name].protocol) {
    case 'anthropic':
      return resolveModel('anthropic/claude-sonnet-4-5', {}, url);
    case 'gemini':
      return resolveModel('gemini/gemini-2.5-pro', {}, url);
    case 'openai-responses':
      return {
        ...resolveModel('openai/gpt-5', {}, `${url}/v1`),
        protocols: ['openai-responses', 'openai-chat'],
      };
    default:
      return resolveModel('openai/gpt-4o', {}, `${url}/v1`);
  }
}

/** Every file of a folder, as one text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'latin1'))
    .join('\n');
}

/** A trial through `berth run` (the CLI's gateway, the key in its environment); the job folder is checked for the key. */
async function runCli(name: InstalledAgentName, content: string, cli: { model: string; base: string }) {
  const upstream = await startScriptedModelServer(
    editAndRunScript({ file: { path: '/app/greet.py', content }, command: COMMAND_MARK }),
  );
  cleanups.push(() => upstream.close());
  const jobs = tempDir(`berth-installed-cli-${name}-`);
  const run = await execa(
    'node',
    [
      bin,
      'run',
      '-p',
      TASK_DIR,
      '-a',
      name,
      '-m',
      cli.model,
      '--model-base-url',
      `${upstream.url}${cli.base}`,
      '--image-map',
      `debian:bookworm-slim=${BASE_IMAGE}`,
      '--jobs-dir',
      jobs,
      '--job-name',
      name,
    ],
    { reject: false, env: { ...process.env, CI: '1', OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY } },
  );
  const job = join(jobs, name);
  const trialDir = join(job, readdirSync(job).find((d) => d.startsWith('edit-and-run')) as string);
  const stderr = () => readFileSync(join(trialDir, 'agent', 'command', 'stderr.txt'), 'utf8').slice(-3000);
  expect(run.stdout, stderr()).toContain('resolved 1/1');
  expect(run.exitCode).toBe(0);
  // The upstream got the real key; no file of the job holds it.
  for (const request of upstream.requests) expect(JSON.stringify(request.headers)).toContain(KEY);
  expect(allText(job)).not.toContain(KEY);
  const result = JSON.parse(readFileSync(join(trialDir, 'result.json'), 'utf8'));
  return { result, trialDir, upstream };
}

async function run(name: InstalledAgentName, content: string) {
  const upstream = await startScriptedModelServer(
    editAndRunScript({ file: { path: '/app/greet.py', content }, command: COMMAND_MARK }),
  );
  cleanups.push(() => upstream.close());
  const gateway = await ModelGateway.start({
    credentials: Credentials.of({ OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY, GEMINI_API_KEY: KEY }),
    prices: PriceTable.load(),
    retry: { initialDelayMs: 50 },
  });
  cleanups.push(() => gateway.stop());
  const model = target(name, upstream.url);
  // The product's path: the trial opens a gateway session; the agent reaches it through the
  // relay on the gateway's socket, mounted into the container.
  const agent = new InstalledAgent({
    name,
    version: AGENT_PACKAGES[name].defaultVersion,
    model: model.id,
    endpoint: modelEndpointFor,
  });
  const trialDir = tempDir(`berth-installed-run-${name}-`);
  const result = await runTrial({
    task: loadHarborTask(TASK_DIR),
    agent,
    attempt: 1,
    trialName: `${name}-trial`,
    trialDir,
    jobId: JOB_ID,
    source: 'test',
    providers: [new DockerEnvironmentProvider({ imageMap: fixtureImageMap() })],
    verifiers: [new HarborVerifier()],
    models: { gateway, target: model },
  });
  // The real key stays with the gateway: no file of the trial holds it.
  expect(allText(trialDir)).not.toContain(KEY);
  return { result, trialDir, upstream };
}

describe.skipIf(skipDocker)(
  'installed agents run through the gateway (real CLIs, Docker, no-network task)',
  () => {
    for (const name of ['claude-code', 'codex', 'gemini-cli', 'opencode', 'qwen-code'] as const) {
      it(`${name}: writes the file and runs the command (reward 1); a wrong script gets 0`, async () => {
        const cli = THROUGH_CLI[name];
        const good = cli
          ? await runCli(name, 'print("hello, berth")\n', cli)
          : await run(name, 'print("hello, berth")\n');
        const log = (f: string) => readFileSync(join(good.trialDir, 'agent', ...f.split('/')), 'utf8');
        expect(good.result.exception_info, log('command/stderr.txt').slice(-2000)).toBeFalsy();
        expect(good.result.verifier_result?.rewards, log('command/stdout.txt').slice(0, 6000)).toEqual({
          reward: 1,
        });
        expect(good.result.agent_setup?.finished_at).toBeTruthy();
        expect(good.upstream.requests.length).toBeGreaterThanOrEqual(3);
        // Harbor's token fields come from the gateway's count.
        expect(good.result.agent_result?.n_input_tokens).toBeGreaterThan(0);
        // The native log is kept under Harbor's name.
        expect(log(`${name}.txt`).length).toBeGreaterThan(0);
        // Its own log converted to ATIF, valid against Harbor's schema, with the command and its output.
        const trajectory = JSON.parse(readFileSync(join(good.trialDir, 'agent', 'trajectory.json'), 'utf8'));
        expect(trajectoryValidator()(trajectory)).toEqual([]);
        const calls = trajectory.steps.flatMap(
          (s: { tool_calls?: Array<{ arguments: unknown }> }) => s.tool_calls ?? [],
        );
        // (Claude Code drops a leading `cd` to the folder it is in: the script name is what stays.)
        expect(JSON.stringify(calls), JSON.stringify(trajectory.steps).slice(0, 3000)).toContain(
          './record.sh',
        );
        const wrong = await run(name, 'print("hello, world!")\n');
        expect(wrong.result.exception_info).toBeFalsy();
        expect(wrong.result.verifier_result?.rewards).toEqual({ reward: 0 });
      });
    }
  },
);
