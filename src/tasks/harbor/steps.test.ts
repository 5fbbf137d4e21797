// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Harbor's ${VAR} templates are what these tests are about
import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HealthcheckError, runHealthcheck } from '../../environments/docker/healthcheck.ts';
import type { Environment, ExecResult } from '../../environments/environment.ts';
import { InputError } from '../../errors.ts';
import { artifactHostPath } from '../../trials/artifacts.ts';
import { EnvSecretConsentError, EnvTemplateError, resolveEnvTemplates } from './env-template.ts';
import { loadHarborTask } from './loader.ts';
import { aggregateStepRewards, harborPlan, minRewardFailure, needsExtendedTrial } from './steps.ts';

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'harbor-features');

describe('multi-step plan', () => {
  it('reads steps, shared tests fallback, users, min_reward, artifacts and verifier modes', () => {
    const task = loadHarborTask(join(FIXTURES, 'steps-gate'));
    expect(needsExtendedTrial(task)).toBe(true);
    const plan = harborPlan(task);
    expect(plan.multiStep).toBe(true);
    expect(plan.strategy).toBe('mean');
    const [first, second, third] = plan.steps;
    expect(first?.testsDirs.map((d) => d.split('/').slice(-3).join('/'))).toEqual([
      'harbor-features/steps-gate/tests',
      'steps/first/tests',
    ]);
    expect(second?.testsDirs).toHaveLength(1); // shared tests only
    expect(first?.minReward).toEqual({ reward: 1, quality: 0.4 });
    expect(first?.agentUser).toBe('agent');
    expect(second?.verifierUser).toBe('checker');
    expect(first?.workdirDir).toMatch(/steps\/first\/workdir$/);
    expect(third?.solutionDir).toBeUndefined();
    expect(second?.artifacts.map((a) => a.source)).toEqual(['/app/a.txt', '/app/b.txt']);
    expect(plan.steps.every((s) => s.verifierMode === 'shared')).toBe(true);

    const sep = harborPlan(loadHarborTask(join(FIXTURES, 'separate-artifacts')));
    expect(sep.steps[0]?.verifierMode).toBe('separate');
    expect(sep.steps[0]?.verifierEnvironment).toMatchObject({
      network: { mode: 'no-network' },
      memoryMb: 512,
    });
    expect(sep.healthcheck).toMatchObject({ intervalSec: 0.2, timeoutSec: 5, retries: 5, startPeriodSec: 0 });
    expect(harborPlan(loadHarborTask(join(FIXTURES, 'kotlin-junit'))).steps[0]?.kotlinExpected).toMatch(
      /expected_tests\.json$/,
    );
  });

  it('bad [[steps]]: every problem of every step, each on its line, when the task loads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-steps-'));
    made.push(dir);
    const task = join(dir, 'steps-gate');
    await cp(join(FIXTURES, 'steps-gate'), task, { recursive: true });
    await rename(join(task, 'steps', 'second'), join(task, 'steps', 'zweite'));
    await rm(join(task, 'steps', 'third', 'instruction.md'));
    const toml = join(task, 'task.toml');
    const text = `${await readFile(toml, 'utf8')}\n[steps.verifier]\nenvironment_mode = "shared"\n\n[steps.verifier.environment]\ncpus = 1\n`;
    await writeFile(toml, text);
    const lineOf = (needle: string) => text.split('\n').indexOf(needle) + 1;
    let error: InputError | undefined;
    try {
      loadHarborTask(task);
    } catch (e) {
      error = e as InputError;
    }
    expect(error).toBeInstanceOf(InputError);
    expect(error?.exitCode).toBe(2);
    expect(error?.issues.map((i) => [i.file, i.line, i.field])).toEqual([
      [toml, lineOf('name = "second"'), 'steps[1].name'],
      [toml, lineOf('name = "third"'), 'steps[2].name'],
      [toml, lineOf('environment_mode = "shared"'), 'steps[2].verifier.environment_mode'],
    ]);
    expect(error?.message.split('\n')).toEqual([
      `${toml}: 3 problems:`,
      `  ${toml}:${lineOf('name = "second"')}: steps[1].name: no folder steps/second/ for this step`,
      `  ${toml}:${lineOf('name = "third"')}: steps[2].name: missing steps/third/instruction.md`,
      `  ${toml}:${lineOf('environment_mode = "shared"')}: steps[2].verifier.environment_mode: \`environment_mode = "shared"\` cannot be combined with [steps.verifier.environment]`,
    ]);
  });

  it("step-level agent/verifier network_mode become that step's phase networks", () => {
    const task = loadHarborTask(join(FIXTURES, 'steps-gate'));
    const steps = (task.metadata.task_toml as { steps: Array<Record<string, unknown>> }).steps;
    steps[1] = { ...steps[1], agent: { network_mode: 'public' }, verifier: { network_mode: 'no-network' } };
    const plan = harborPlan(task);
    expect(plan.steps[0]?.phaseNetwork).toBeUndefined();
    expect(plan.steps[1]?.phaseNetwork).toEqual({
      agent: { mode: 'public' },
      verifier: { mode: 'no-network' },
    });
  });

  it('min_reward: a number gates `reward`, a table gates each key, a missing key is -infinity', () => {
    expect(minRewardFailure({ reward: 1 }, 1)).toBeUndefined();
    expect(minRewardFailure({ reward: 0.5 }, 1)).toBe('reward=0.5 below min_reward 1');
    expect(minRewardFailure({ reward: 1, quality: 0.3 }, { reward: 1, quality: 0.4 })).toBe(
      'quality=0.3 below min_reward 0.4',
    );
    expect(minRewardFailure({ reward: 1 }, { quality: 0 })).toBe('quality=-Infinity below min_reward 0');
    expect(minRewardFailure(null, 0)).toBe('reward=-Infinity below min_reward 0');
  });

  it('mean per key over steps with a verdict (missing key 0); final = last step', () => {
    const steps: Array<{ verifier_result: { rewards: Record<string, number> } | null }> = [
      { verifier_result: { rewards: { reward: 1, quality: 0.5 } } },
      { verifier_result: null },
      { verifier_result: { rewards: { reward: 0 } } },
    ];
    expect(aggregateStepRewards('mean', steps)).toEqual({ reward: 0.5, quality: 0.25 });
    expect(aggregateStepRewards('final', steps)).toEqual({ reward: 0 });
    expect(aggregateStepRewards('final', steps.slice(0, 2))).toBeNull();
    expect(aggregateStepRewards('mean', [{ verifier_result: null }])).toBeNull();
  });
});

describe('env templating', () => {
  const hostEnv = { NAME: 'berth', EMPTY: '', OPENAI_API_KEY: 'sk-1' };
  it('resolves ${VAR} and ${VAR:-default} (default when unset or empty)', () => {
    expect(
      resolveEnvTemplates(
        { A: 'hi ${NAME}', B: '${MISSING:-dflt}', C: '${EMPTY:-e}', D: 'plain $NAME' },
        { hostEnv },
      ),
    ).toEqual({ A: 'hi berth', B: 'dflt', C: 'e', D: 'plain $NAME' });
    expect(() => resolveEnvTemplates({ A: '${MISSING}' }, { hostEnv })).toThrow(EnvTemplateError);
  });
  it('copies a secret-looking variable only with consent', () => {
    expect(() => resolveEnvTemplates({ K: '${OPENAI_API_KEY}' }, { hostEnv })).toThrow(EnvSecretConsentError);
    expect(resolveEnvTemplates({ K: '${OPENAI_API_KEY}' }, { hostEnv, allowSecrets: true })).toEqual({
      K: 'sk-1',
    });
    expect(
      resolveEnvTemplates(
        { K: '${OPENAI_API_KEY}' },
        { hostEnv: { ...hostEnv, BERTH_ALLOW_ENV_SECRETS: '1' } },
      ),
    ).toEqual({ K: 'sk-1' });
    // a secret name that is unset falls back to its default without consent: nothing is copied from the host
    expect(resolveEnvTemplates({ K: '${GH_TOKEN:-none}' }, { hostEnv })).toEqual({ K: 'none' });
  });
  it("asks consent for what the sandbox's filter drops (src/sandbox/secrets.ts), not a narrower list", () => {
    // Names the template's own list missed, and credentials seen only in the value.
    const host = {
      DB_PASS: 'hunter2',
      MYSQL_PWD: 'hunter2',
      GITHUB_PAT: 'x',
      SENTRY_DSN: 'https://k@sentry.example/1',
      DATABASE_URL: 'postgres://app:pw@db.example/x',
      HF_HOME_ALIAS: 'hf_abcdefghijkl',
      NAME: 'berth',
    };
    for (const name of Object.keys(host).filter((n) => n !== 'NAME'))
      expect(() => resolveEnvTemplates({ K: `\${${name}}` }, { hostEnv: host }), name).toThrow(
        EnvSecretConsentError,
      );
    expect(resolveEnvTemplates({ K: '${NAME}' }, { hostEnv: host })).toEqual({ K: 'berth' });
  });
});

describe('artifacts and healthcheck', () => {
  it('places artifacts as Harbor does', () => {
    expect(artifactHostPath({ source: '/tmp/configured-artifact.txt' })).toBe('configured-artifact.txt');
    expect(artifactHostPath({ source: '/srv/out/', destination: 'a/../b' })).toBe('a/b');
    expect(artifactHostPath({ source: '/logs/artifacts' })).toBe('');
  });

  function fakeEnv(codes: number[]): Environment & { calls: number } {
    const env = {
      calls: 0,
      kind: 'fake',
      workdir: '/',
      isolated: true,
      async exec(): Promise<ExecResult> {
        const exitCode = codes[Math.min(env.calls, codes.length - 1)] ?? 1;
        env.calls++;
        return { exitCode, timedOut: false, output: '', truncated: false, durationSec: 0 };
      },
      async upload() {},
      async download() {
        return { files: 0, directories: 0, bytes: 0, skipped: [], skippedCount: 0 };
      },
      async stop() {},
    };
    return env;
  }
  it('counts consecutive failures after the start period only', async () => {
    const sleep = async () => {};
    const env = fakeEnv([1, 1, 0]);
    await expect(
      runHealthcheck(
        env,
        { command: 'x', intervalSec: 0, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 0, retries: 3 },
        { sleep },
      ),
    ).resolves.toBe(3);
    const failing = fakeEnv([1]);
    await expect(
      runHealthcheck(
        failing,
        { command: 'x', intervalSec: 0, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 0, retries: 2 },
        { sleep },
      ),
    ).rejects.toThrow(HealthcheckError);
    expect(failing.calls).toBe(2);
    // During a start period failures do not count: 5 failures inside it, then 2 more end it.
    const slow = fakeEnv([1]);
    let t = 0;
    const start = performance.now;
    performance.now = () => t;
    try {
      await expect(
        runHealthcheck(
          slow,
          { command: 'x', intervalSec: 0, timeoutSec: 1, startPeriodSec: 5, startIntervalSec: 1, retries: 2 },
          {
            sleep: async (ms) => {
              t += ms;
            },
          },
        ),
      ).rejects.toThrow(HealthcheckError);
    } finally {
      performance.now = start;
    }
    expect(slow.calls).toBe(7);
  });
});
