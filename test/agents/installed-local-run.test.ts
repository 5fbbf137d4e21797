/**
 * Claude Code and Codex run for real in the local environment's sandbox: the real CLI from
 * the prepared host folder (bound read-only), through berth's model gateway on 127.0.0.1,
 * against the scripted model server, on a row of the bundled DockerLess sample. The script
 * writes the gold fix and runs the tests: resolved; a wrong fix: not resolved.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InstalledAgent } from '../../src/agents/installed/agent.ts';
import { AGENT_PACKAGES } from '../../src/agents/installed/packages.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { modelEndpointFor } from '../../src/models/access.ts';
import { Credentials } from '../../src/models/credentials.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { PriceTable } from '../../src/models/pricing.ts';
import { type ModelTarget, resolveModel } from '../../src/models/providers.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { createVerifiers } from '../../src/verifiers/registry.ts';
import { trajectoryValidator } from '../helpers/atif.ts';
import { editAndRunScript } from '../helpers/coding-agent-script.ts';
import { startScriptedModelServer } from '../helpers/scripted-model-server.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
  await temp.cleanup();
});
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const goldFix = readFileSync(
  fileURLToPath(new URL('../../examples/src/csvline/fix/lib/csvline.js', import.meta.url)),
  'utf8',
);
const KEY = 'sk-real-key-MARKER-77aa';
const COMMAND_MARK = 'node --test test/ 2>&1 | tail -3';

async function run(name: 'claude-code' | 'codex', content: string) {
  const task = (await loadSwebench(sample)).find((t) => t.name === 'berth__csvline-1');
  if (!task) throw new Error('no berth__csvline-1 in the sample');
  const upstream = await startScriptedModelServer(
    editAndRunScript({
      file: { path: 'lib/csvline.js', content },
      command: COMMAND_MARK,
    }),
  );
  cleanups.push(() => upstream.close());
  const gateway = await ModelGateway.start({
    credentials: Credentials.of({ OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY }),
    prices: PriceTable.load(),
    retry: { initialDelayMs: 50 },
  });
  cleanups.push(() => gateway.stop());
  const model: ModelTarget =
    name === 'claude-code'
      ? resolveModel('anthropic/claude-sonnet-4-5', {}, upstream.url)
      : {
          ...resolveModel('openai/gpt-5', {}, `${upstream.url}/v1`),
          protocols: ['openai-responses', 'openai-chat'],
        };
  const trialDir = join(await temp.make('berth-installed-local-run-'), 'trial');
  const result = await runTrialWith({
    task,
    agent: new InstalledAgent({
      name,
      version: AGENT_PACKAGES[name].defaultVersion,
      model: model.id,
      endpoint: modelEndpointFor,
    }),
    attempt: 1,
    trialName: `${name}-local`,
    trialDir,
    jobId: 'installed-local-run',
    source: 'swe-dockerless',
    providers: [new LocalEnvironmentProvider()],
    verifiers: createVerifiers(),
    models: { gateway, target: model },
  });
  return { result, trialDir };
}

describe('installed agents in the local sandbox, through the gateway', () => {
  for (const name of ['claude-code', 'codex'] as const) {
    it(`${name}: the gold fix written by the real CLI resolves the row; a wrong fix does not`, {
      timeout: 600_000,
    }, async () => {
      const good = await run(name, goldFix);
      const stdout = () => readFileSync(join(good.trialDir, 'agent', 'command', 'stdout.txt'), 'utf8');
      expect(good.result.exception_info, stdout().slice(0, 4000)).toBeFalsy();
      expect(good.result.verifier_result?.rewards, stdout().slice(0, 4000)).toEqual({ reward: 1 });
      // Its own log converted to ATIF, valid against Harbor's schema, with the command and its output.
      const trajectory = JSON.parse(readFileSync(join(good.trialDir, 'agent', 'trajectory.json'), 'utf8'));
      expect(trajectoryValidator()(trajectory)).toEqual([]);
      const calls = trajectory.steps.flatMap(
        (s: { tool_calls?: Array<{ arguments: unknown }> }) => s.tool_calls ?? [],
      );
      expect(JSON.stringify(calls)).toContain(COMMAND_MARK);
      const wrong = await run(name, '// nothing here\n');
      expect(wrong.result.verifier_result?.rewards).toEqual({ reward: 0 });
    });
  }
});
