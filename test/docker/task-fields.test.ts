// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Harbor's ${VAR} templates are what these tests are about
/**
 * task.toml fields on the real Docker engine (issue 19): `[environment] env` in every command of
 * the agent and the verifier, GPUs refused on an engine without them (the same reason as
 * `berth check`).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { engineAccelerators } from '../../src/environments/docker/accelerators.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { checkTask } from '../../src/tasks/harbor/check.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import type { Task } from '../../src/tasks/task.ts';
import { fixtureImageMap, harborTrial, skipDocker, tempDir } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'task-fields');
const read = (...p: string[]) => readFileSync(join(...p), 'utf8').trim();

const trial = (task: Task) => harborTrial(task, new ScriptOracleAgent(), 'berth-fields-');

describe.skipIf(skipDocker)('task.toml fields on the real engine', () => {
  const saved = process.env.BERTH_FIXTURE_FIELD;
  afterEach(() => {
    if (saved === undefined) delete process.env.BERTH_FIXTURE_FIELD;
    else process.env.BERTH_FIXTURE_FIELD = saved;
  });

  it('[environment] env reaches every agent and verifier command; a command’s own variables win', async () => {
    process.env.BERTH_FIXTURE_FIELD = 'from the host';
    const { r, dir } = await trial(loadHarborTask(join(FIXTURES, 'env-everywhere')));
    expect(r.exception_info).toBeNull();
    expect(r.verifier_result?.rewards.reward).toBe(1);
    expect(read(dir, 'agent', 'env.txt')).toBe(
      'agent: TASK_COLOUR=teal SHARED=from [environment] env FROM_HOST=from the host ONLY_VERIFIER=unset',
    );
    expect(read(dir, 'verifier', 'env.txt')).toBe(
      "verifier: TASK_COLOUR=teal SHARED=the verifier's own value wins FROM_HOST=from the host ONLY_VERIFIER=v",
    );
  });

  it('a template reading a secret-looking host variable is refused before anything starts', async () => {
    const copy = tempDir('berth-fields-secret-');
    cpSync(join(FIXTURES, 'env-everywhere'), copy, { recursive: true });
    const toml = join(copy, 'task.toml');
    writeFileSync(toml, `${readFileSync(toml, 'utf8')}LEAK = "\${BERTH_FIXTURE_API_TOKEN}"\n`);
    process.env.BERTH_FIXTURE_API_TOKEN = 'sk-not-for-the-task';
    try {
      const { r, dir } = await trial(loadHarborTask(copy));
      expect(r.exception_info?.exception_type).toBe('EnvSecretConsentError');
      expect(r.exception_info?.exception_message).toContain('BERTH_FIXTURE_API_TOKEN');
      expect(r.environment_setup?.started_at ?? '').toBe('');
      expect(readFileSync(join(dir, 'result.json'), 'utf8')).not.toContain('sk-not-for-the-task');
    } finally {
      delete process.env.BERTH_FIXTURE_API_TOKEN;
    }
  });

  it('a GPU task on an engine without GPUs: the trial is refused with the reason berth check gives', async () => {
    const task = loadHarborTask(join(FIXTURES, 'gpu-task'));
    const engine = await engineAccelerators((await connectDocker()).docker);
    if (engine.gpuRuntime) return expect(engine.gpuRuntime).toBe(true); // an engine with GPUs runs it
    const { r } = await trial(task);
    expect(r.exception_info?.exception_type).toBe('UnsupportedEnvironmentError');
    expect(r.exception_info?.exception_message).toContain('needs 1 GPU(s)');
    expect(r.exception_info?.exception_message).toContain('gpu_types = ["H100","A100"]');
    expect(r.verifier_result).toBeNull();
    const check = await checkTask(task, fixtureImageMap(), async () => true, engine);
    expect(check.canRun).toBe('no');
    expect(check.reasons).toContain(r.exception_info?.exception_message);
  });
});
