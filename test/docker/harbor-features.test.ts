// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Harbor's ${VAR} templates are what these tests are about
// biome-ignore-all lint/suspicious/noExplicitAny: the tests read untyped verifier details
/**
 * The extended Harbor trial on the real Docker engine (src/trials/engine.ts, plan.ts):
 * multi-step gating and aggregation, users, workdir/setup.sh, shared tests,
 * env templating, artifacts, a separate verifier container, healthchecks and
 * the Kotlin Benchmark's grading by berth.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { NopAgent } from '../../src/agents/nop.ts';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import type { Task } from '../../src/tasks/task.ts';
import { harborTrial, ShellAgent, skipDocker } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'harbor-features');
const read = (...p: string[]) => readFileSync(join(...p), 'utf8').trim();

const trial = (task: Task, agent: Agent) => harborTrial(task, agent, 'berth-features-');

describe.skipIf(skipDocker)('multi-step tasks (real engine)', () => {
  const saved = process.env.BERTH_FIXTURE_GREETING;
  beforeEach(() => {
    process.env.BERTH_FIXTURE_GREETING = 'hi from the host';
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.BERTH_FIXTURE_GREETING;
    else process.env.BERTH_FIXTURE_GREETING = saved;
  });

  it('oracle: every step runs as its user, rewards are the per-key mean, outputs archived per step', async () => {
    const task = loadHarborTask(join(FIXTURES, 'steps-gate'));
    const { r, dir } = await trial(task, new ScriptOracleAgent());
    expect(r.step_results?.map((s) => [s.step_name, s.verifier_result?.rewards])).toEqual([
      ['first', { reward: 1, quality: 0.5 }],
      ['second', { reward: 1 }],
      ['third', { reward: 0 }],
    ]);
    // mean per key; a key missing from a step counts 0 (Harbor's _aggregate_step_rewards)
    expect(r.verifier_result?.rewards.reward).toBeCloseTo(2 / 3, 10);
    expect(r.verifier_result?.rewards.quality).toBeCloseTo(0.5 / 3, 10);
    expect(r.berth.status).toBe('unresolved');
    // The first step's setup.sh ran as its user without error (the failed set-up test's control).
    expect(r.step_results?.[0]?.exception_info).toBeNull();
    expect(read(dir, 'steps', 'first', 'verifier', 'env.txt')).toBe('GREETING=hi from the host');
    expect(read(dir, 'steps', 'second', 'verifier', 'verifier-user.txt')).toBe('checker');
    expect(existsSync(join(dir, 'steps', 'first', 'agent', 'oracle.txt'))).toBe(true);
    // task artifact in every step, the step's own in its step only
    expect(read(dir, 'steps', 'first', 'artifacts', 'a.txt')).toBe('agent');
    expect(read(dir, 'steps', 'second', 'artifacts', 'b.txt')).toBe('two');
    expect(existsSync(join(dir, 'steps', 'first', 'artifacts', 'b.txt'))).toBe(false);
    const manifest = JSON.parse(read(dir, 'steps', 'second', 'artifacts', 'manifest.json'));
    expect(manifest.map((e: { source: string; status: string }) => `${e.source}:${e.status}`)).toEqual([
      '/logs/artifacts:empty', // the agent wrote nothing there
      '/app/a.txt:ok',
      '/app/b.txt:ok',
    ]);
    expect(JSON.parse(read(dir, 'result.json')).step_results).toHaveLength(3);
  });

  // The `final` strategy (the last step's rewards) is checked on a solved trial of this fixture
  // in test/docker/planted-links.test.ts, whose multi-step trial runs it under `final`.
  it('min_reward per key stops later steps (nop)', async () => {
    const { r } = await trial(loadHarborTask(join(FIXTURES, 'steps-gate')), new NopAgent());
    expect(r.step_results).toHaveLength(1);
    expect(r.step_results?.[0]?.berth?.stopped_after).toBe('reward=0 below min_reward 1');
    expect(r.verifier_result?.rewards).toEqual({ reward: 0, quality: 0 });
  });

  it('a failed setup.sh is reported on its step, and the trial is not a silent null', async () => {
    // The same set-up as the task's own user runs without error (the oracle test above asserts
    // it); make setup.sh fail by running it as a user who cannot write /app: a hostile image change.
    const broken = loadHarborTask(join(FIXTURES, 'steps-gate'));
    const toml = broken.metadata.task_toml as { agent: { user: string } };
    toml.agent.user = 'nobody';
    const failed = await trial(broken, new ScriptOracleAgent());
    const step = failed.r.step_results?.[0];
    expect(step?.exception_info?.exception_type).toBe('StepSetupError');
    expect(step?.exception_info?.exception_message).toMatch(/^step first: setup.sh exited with code 1/);
    expect(step?.agent_execution).toBeNull();
    expect(failed.r.step_results).toHaveLength(1);
    expect(failed.r.verifier_result).toBeNull();
    expect(failed.r.exception_info?.exception_type).toBe('StepSetupError');
    expect(failed.r.berth.status).toBe('error');
  });

  it('a secret-looking host variable is copied only with consent', async () => {
    const task = loadHarborTask(join(FIXTURES, 'steps-gate'));
    (task.metadata.task_toml as { verifier: { env: Record<string, string> } }).verifier.env = {
      GREETING: '${BERTH_FIXTURE_API_TOKEN}',
    };
    process.env.BERTH_FIXTURE_API_TOKEN = 'sekrit';
    try {
      const { r } = await trial(task, new NopAgent());
      expect(r.exception_info?.exception_type).toBe('EnvSecretConsentError');
      expect(r.environment_setup).toBeNull(); // refused before anything started
    } finally {
      delete process.env.BERTH_FIXTURE_API_TOKEN;
    }
  });
});

describe.skipIf(skipDocker)('separate verifier environment, artifacts, healthcheck (real engine)', () => {
  it('the verifier container gets the artifacts and nothing else; planted rewards do not count', async () => {
    const task = loadHarborTask(join(FIXTURES, 'separate-artifacts'));
    const { r, dir } = await trial(task, new ScriptOracleAgent());
    expect(r.verifier_result?.rewards).toEqual({ reward: 1 });
    expect(r.berth.note).toContain('healthcheck passed after 3 tries');
    expect(read(dir, 'artifacts', 'out.txt')).toBe('artifact ok');
    expect(read(dir, 'artifacts', 'copied-dir', 'keep.txt')).toBe('kept');
    expect(existsSync(join(dir, 'artifacts', 'copied-dir', 'drop.log'))).toBe(false);
    expect(r.berth.verifier_details).toMatchObject({ verifier_environment: 'separate' });
    // A hostile agent: plants a reward, rewrites /tests in its own container, leaves a leak marker.
    const hostile = new ShellAgent(
      'echo 1 > /logs/verifier/reward.txt; mkdir -p /tests; printf "echo 1 > /logs/verifier/reward.txt" > /tests/test.sh; echo "artifact ok" > /tmp/out.txt; echo "agent only" > /tmp/agent-only.txt',
    );
    const bad = await trial(loadHarborTask(join(FIXTURES, 'separate-artifacts')), hostile);
    expect(bad.r.verifier_result?.rewards).toEqual({ reward: 0 });
    expect(read(bad.dir, 'verifier', 'test-stdout.txt')).toContain('missing answer.txt');
  });

  it('a healthcheck that never passes fails the trial with HealthcheckError before the agent', async () => {
    const task = loadHarborTask(join(FIXTURES, 'separate-artifacts'));
    const env = (task.metadata.task_toml as { environment: Record<string, unknown> }).environment;
    env.healthcheck = { command: 'false', interval_sec: 0.1, retries: 2 };
    const { r } = await trial(task, new ScriptOracleAgent());
    expect(r.exception_info?.exception_type).toBe('HealthcheckError');
    expect(r.exception_info?.exception_message).toContain('after 2 consecutive retries');
    expect(r.agent_execution).toBeNull();
  });
});

describe.skipIf(skipDocker)('Kotlin Benchmark tasks graded by berth (real engine)', () => {
  it('oracle -> 1 from the JUnit XML; nop -> 0 although test.sh wrote 1', async () => {
    const task = loadHarborTask(join(FIXTURES, 'kotlin-junit'));
    const solved = await trial(task, new ScriptOracleAgent());
    expect(solved.r.verifier_result?.rewards).toEqual({ reward: 1 });
    const details = solved.r.berth.verifier_details as Record<string, any>;
    expect(details.test_sh_rewards).toEqual({ reward: 1 });
    expect(details.berth_grade).toMatchObject({ resolved: true, reports: 2 });
    expect(
      existsSync(
        join(
          solved.dir,
          'verifier',
          'junit-reports',
          'app',
          'lib',
          'build',
          'test-results',
          'test',
          'TEST-demo.Calc$Nested Spec.xml',
        ),
      ),
    ).toBe(true);

    const unsolved = await trial(task, new NopAgent());
    expect(unsolved.r.verifier_result?.rewards).toEqual({ reward: 0 });
    const u = unsolved.r.berth.verifier_details as Record<string, any>;
    expect(u.test_sh_rewards).toEqual({ reward: 1 });
    expect(u.berth_grade.failing.map((v: { id: string }) => v.id)).toEqual(['demo.CalcTest.adds()']);
  });

  it('no report -> reward 0 (never the exit code); a planted passing report is deleted before test.sh', async () => {
    const task = loadHarborTask(join(FIXTURES, 'kotlin-junit'));
    const none = await trial(task, new ShellAgent('touch /app/fixed /app/no-reports'));
    expect(none.r.verifier_result?.rewards).toEqual({ reward: 0 });
    expect((none.r.berth.verifier_details as Record<string, any>).berth_grade.error).toMatch(
      /no JUnit report/,
    );
    const planted = new ShellAgent(
      `mkdir -p /app/other/build/test-results/test && cat > /app/other/build/test-results/test/TEST-x.xml <<'X'
<testsuite name="demo.CalcTest"><testcase name="adds()" classname="demo.CalcTest"/></testsuite>
X`,
    );
    const forged = await trial(task, planted);
    expect(forged.r.verifier_result?.rewards).toEqual({ reward: 0 });
    expect((forged.r.berth.verifier_details as Record<string, any>).stale_reports_deleted).toBe(1);
  });
});
