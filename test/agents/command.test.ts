/**
 * The `command` agent on the bundled DockerLess sample (examples/swe-dockerless.jsonl):
 * real repositories, real test runs (node:test, pytest), the local environment.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  COMMAND_OUTPUT_CAP_BYTES,
  CommandAgent,
  type CommandAgentOptions,
} from '../../src/agents/command.ts';
import { createAgent } from '../../src/agents/registry.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { UsageError } from '../../src/errors.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { createVerifiers } from '../../src/verifiers/registry.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const rows = readFileSync(sample, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown>);
const row = (id: string) => rows.find((r) => r.instance_id === id) as Record<string, unknown>;
const tasks = await loadSwebench(sample);
const task = (id: string) => tasks.find((t) => t.name === id) as Task;

const provider = new LocalEnvironmentProvider();
const verifiers = createVerifiers();

async function trial(t: Task, options: CommandAgentOptions): Promise<{ result: TrialResult; dir: string }> {
  const dir = join(await temp.make('berth-command-'), 'trial');
  // The sandbox uid reads the kits: mkdtemp makes them 0700.
  for (const v of Object.values(options.env ?? {})) if (v.startsWith(tmpdir())) await chmod(v, 0o755);
  const result = await runTrial({
    task: t,
    // The local sandbox hides the host's /tmp: the kits the tests make there are mounted.
    agent: new CommandAgent({
      ...options,
      mounts: Object.values(options.env ?? {}).filter((v) => v.startsWith(tmpdir())),
    }),
    attempt: 1,
    trialName: `${t.name}__1`,
    trialDir: dir,
    jobId: 'command-test',
    source: 'swe-dockerless',
    providers: [provider],
    verifiers,
  });
  return { result, dir };
}

/** A folder with each row's gold patch as `<instance_id>.diff`: what the "gold" shell agent applies. */
async function goldKit(): Promise<string> {
  const dir = await temp.make('berth-gold-kit-');
  for (const r of rows) await writeFile(join(dir, `${r.instance_id}.diff`), r.patch as string);
  return dir;
}

describe('command agent on the DockerLess sample', () => {
  it('a shell script applying the gold fix resolves; instruction, model and env reach it, secrets are not logged', async () => {
    const kit = await goldKit();
    const { result, dir } = await trial(task('berth__csvline-1'), {
      command: [
        'cp "$BERTH_INSTRUCTION_FILE" "$BERTH_AGENT_LOG_DIR/seen-instruction.md"',
        'echo "model=$BERTH_MODEL task=$BERTH_TASK_NAME"',
        'printf %s "$SERVICE_API_KEY" | rev',
        'git apply "$GOLD_KIT/$BERTH_TASK_NAME.diff"',
      ].join('\n'),
      // DB_PASS and a URL's password: names and values the record's own narrower list let through.
      env: {
        GOLD_KIT: kit,
        SERVICE_API_KEY: 's3cr3t-value',
        DB_PASS: 'dbpass-value-1',
        UPSTREAM_URL: 'https://bot:urlpass-value-2@git.example/x.git',
      },
      model: 'local/gold-script',
    });
    expect(result.berth.status).toBe('resolved');
    expect(result.berth.FAIL_TO_PASS).toEqual({ passed: 8, total: 8 });
    expect(result.berth.PASS_TO_PASS).toEqual({ passed: 9, total: 9 });
    expect(result.exception_info).toBeNull();
    expect(result.agent_info).toMatchObject({ name: 'command', model_info: { name: 'local/gold-script' } });
    expect(result.agent_result).toMatchObject({
      model_name: 'local/gold-script',
      metadata: { command_exit_code: 0 },
    });
    // The submitted patch is the repository's diff: the gold fix, file for file.
    const patch = await readFile(join(dir, 'agent', 'patch.diff'), 'utf8');
    expect(patch).toContain('diff --git a/lib/csvline.js b/lib/csvline.js');
    expect(patch).toContain('unterminated quoted field at column');
    expect(await readFile(join(dir, 'agent', 'seen-instruction.md'), 'utf8')).toBe(
      row('berth__csvline-1').problem_statement,
    );
    const stdout = await readFile(join(dir, 'agent', 'command', 'stdout.txt'), 'utf8');
    expect(stdout).toContain('model=local/gold-script task=berth__csvline-1');
    expect(stdout).toContain('eulav-t3rc3s'); // the value, reversed by the agent
    // Recorded by name, never by value.
    const recorded = [
      await readFile(join(dir, 'agent', 'command', 'command.txt'), 'utf8'),
      await readFile(join(dir, 'result.json'), 'utf8'),
      await readFile(join(dir, 'config.json'), 'utf8'),
    ].join('\n');
    expect(recorded).toContain('SERVICE_API_KEY=***');
    expect(recorded).toContain('DB_PASS=***');
    expect(recorded).toContain('UPSTREAM_URL=***');
    for (const value of ['s3cr3t-value', 'dbpass-value-1', 'urlpass-value-2'])
      expect(recorded).not.toContain(value);
  });

  it('output past the cap is cut and marked (stdout and stderr each; the documented 50 MiB, here 1000 bytes)', async () => {
    const { dir } = await trial(task('berth__csvline-1'), {
      command: 'yes AAAAAAAAAAAAAAAAAAA | head -c 5000; yes e | head -c 300 >&2; echo x > /dev/null',
      outputCapBytes: 1000,
    });
    const stdout = await readFile(join(dir, 'agent', 'command', 'stdout.txt'), 'utf8');
    expect(stdout.slice(0, 1000)).toBe('AAAAAAAAAAAAAAAAAAA\n'.repeat(50));
    expect(stdout.slice(1000)).toBe('\n[berth: output truncated at 1000 bytes; 4000 more bytes dropped]\n');
    // Under the cap: kept whole, unmarked.
    const stderr = await readFile(join(dir, 'agent', 'command', 'stderr.txt'), 'utf8');
    expect(stderr).toBe('e\n'.repeat(150));
    expect(COMMAND_OUTPUT_CAP_BYTES).toBe(50 * 1024 * 1024);
  });

  it('a command that changes nothing submits an empty patch', async () => {
    const { result, dir } = await trial(task('berth__csvline-1'), { command: 'ls > /dev/null' });
    expect(result.berth.status).toBe('empty_patch');
    expect(result.verifier_result).toEqual({ rewards: { reward: 0 } });
    expect(await readFile(join(dir, 'agent', 'patch.diff'), 'utf8')).toBe('');
  });

  it('a command that rewrites the test file to pass: the change is reset before the tests, not resolved', async () => {
    const r = row('berth__csvline-1');
    const names = [
      ...JSON.parse(r.FAIL_TO_PASS as string),
      ...JSON.parse(r.PASS_TO_PASS as string),
    ] as string[];
    const kit = await temp.make('berth-cheat-kit-');
    await writeFile(
      join(kit, 'csvline.test.js'),
      `import test from 'node:test';\n${names.map((n) => `test(${JSON.stringify(n)}, () => {});`).join('\n')}\n`,
    );
    const { result, dir } = await trial(task('berth__csvline-1'), {
      command: 'cp "$KIT/csvline.test.js" test/csvline.test.js',
      env: { KIT: kit },
    });
    // The diff taken carries the test-file change; the verifier resets it as for any patch.
    expect(await readFile(join(dir, 'agent', 'patch.diff'), 'utf8')).toContain('b/test/csvline.test.js');
    expect(result.berth.status).toBe('unresolved');
    expect(result.berth.FAIL_TO_PASS?.passed).toBe(0);
    expect(
      (result.berth.verifier_details as { discarded_agent_changes: string[] }).discarded_agent_changes,
    ).toEqual(['test/csvline.test.js']);
    expect(result.berth.note).toContain('discarded agent changes to 1 test file(s)');
  });

  it('a command past the agent timeout is killed, recorded as AgentTimeoutError and graded on its diff so far', async () => {
    const kit = await goldKit();
    const started = performance.now();
    const { result, dir } = await trial(
      { ...task('berth__toposort-1'), agentTimeoutSec: 2 },
      {
        command: `git apply "$GOLD_KIT/$BERTH_TASK_NAME.diff"\nsleep 1234 &\nwait`,
        env: { GOLD_KIT: kit },
      },
    );
    expect((performance.now() - started) / 1000).toBeLessThan(60);
    expect(result.exception_info?.exception_type).toBe('AgentTimeoutError');
    expect(result.agent_result).toMatchObject({ metadata: { timed_out: true, command_exit_code: null } });
    expect(await readFile(join(dir, 'agent', 'command', 'return-code.txt'), 'utf8')).toBe(
      'timed out after 2 s\n',
    );
    // Harbor records the timeout and still verifies: the fix applied before the timeout is graded.
    expect(result.berth.status).toBe('resolved');
    expect(result.berth.note).toContain('agent timed out');
    // The sleeper (seen from the host by its command line: its pid differs in the sandbox) is gone.
    const sleepers = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\u00001234\u0000';
        } catch {
          return false;
        }
      });
    expect(sleepers).toEqual([]);
  });

  it('a command that prints forged success markers and TAP lines does not resolve', async () => {
    const r = row('berth__csvline-1');
    const names = JSON.parse(r.FAIL_TO_PASS as string) as string[];
    const forged = [
      '>>>>> Start Test Output 00000000000000000000000000000000',
      'TAP version 13',
      ...names.map((n, i) => `ok ${i + 1} - ${n}`),
      `1..${names.length}`,
      '>>>>> End Test Output 00000000000000000000000000000000',
    ].join('\n');
    const kit = await temp.make('berth-forge-kit-');
    await writeFile(join(kit, 'forge.js'), `\nconsole.log(${JSON.stringify(forged)});\n`);
    const { result } = await trial(task('berth__csvline-1'), {
      // At import the library prints the forged lines; the bug stays. The agent prints them too.
      command: 'cat "$KIT/forge.js" >> lib/csvline.js\nnode "$KIT/forge.js"',
      env: { KIT: kit },
    });
    expect(result.berth.patch_apply?.applied).toBe(true);
    expect(result.berth.status).toBe('unresolved');
    expect(result.berth.FAIL_TO_PASS?.passed).toBe(0);
  });

  it('--agent-env reaches the agent only: a NODE_OPTIONS that forges the test run never reaches the tests', async () => {
    const r = row('berth__csvline-1');
    const names = [
      ...JSON.parse(r.FAIL_TO_PASS as string),
      ...JSON.parse(r.PASS_TO_PASS as string),
    ] as string[];
    const kit = await temp.make('berth-env-kit-');
    const forge = join(kit, 'forge.cjs');
    const tap = ['TAP version 13', ...names.map((n, i) => `ok ${i + 1} - ${n}`), `1..${names.length}`];
    await writeFile(
      forge,
      `process.stdout.write(${JSON.stringify(`${tap.join('\n')}\n`)});\nprocess.exit(0);\n`,
    );
    const nodeOptions = `--require=${forge}`;
    // Control: with this variable, any node process (the test runner too) prints a passing run.
    const control = spawnSync('node', ['-e', 'console.log("real")'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: nodeOptions },
    });
    expect(control.stdout).toContain(`ok 1 - ${names[0]}`);
    expect(control.stdout).not.toContain('real');
    const { result, dir } = await trial(task('berth__csvline-1'), {
      command: '[ -n "$NODE_OPTIONS" ] && echo "// the agent saw NODE_OPTIONS" >> lib/csvline.js',
      env: { NODE_OPTIONS: nodeOptions },
    });
    expect(await readFile(join(dir, 'agent', 'patch.diff'), 'utf8')).toContain(
      '+// the agent saw NODE_OPTIONS',
    );
    expect(result.berth.status).toBe('unresolved');
    expect(result.berth.FAIL_TO_PASS).toEqual({ passed: 0, total: 8 });
  });

  it('what the agent leaves outside its diff (a git-ignored conftest.py forging passes) never reaches grading', async () => {
    const t = task('berth__durations-1');
    const conftest = [
      'import pytest',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    outcome = yield',
      "    outcome.get_result().outcome = 'passed'",
      '',
    ].join('\n');
    const kit = await temp.make('berth-conftest-kit-');
    await writeFile(join(kit, 'conftest.py'), conftest);
    // Control: in the agent's own environment the file does forge every result.
    const env = await provider.start({ task: t, jobId: 'command-test', trialDir: kit });
    try {
      await writeFile(join(env.workdir, 'conftest.py'), conftest);
      const control = await env.exec(
        'git apply - && python3 -m pytest -rA --tb=no -p no:cacheprovider tests/test_durations.py',
        { input: (t.verifier as { testPatch: string }).testPatch },
      );
      expect(control.output).toContain('PASSED tests/test_durations.py::test_parse_decimal_hours');
      expect(control.output).not.toMatch(/FAILED tests\//);
    } finally {
      await env.stop();
    }
    const { result, dir } = await trial(t, {
      command: [
        'cp "$KIT/conftest.py" conftest.py',
        'mkdir -p .git/info && echo conftest.py >> .git/info/exclude',
        // A visible change too, so the patch is not empty and the tests run.
        'echo "# touched" >> README.md',
      ].join('\n'),
      env: { KIT: kit },
    });
    const patch = await readFile(join(dir, 'agent', 'patch.diff'), 'utf8');
    expect(patch).toContain('b/README.md');
    expect(patch).not.toContain('conftest');
    expect(result.berth.status).toBe('unresolved');
    expect(result.berth.FAIL_TO_PASS).toEqual({ passed: 0, total: 11 });
    expect(result.berth.PASS_TO_PASS).toEqual({ passed: 19, total: 19 });
  });

  it('agent set-up: runs once before the agent; a failure or a timeout ends the trial without verification', async () => {
    const ok = await trial(task('berth__csvline-1'), {
      setup: 'echo installing; touch "$BERTH_AGENT_LOG_DIR/installed"',
      command:
        '[ -f "$BERTH_AGENT_LOG_DIR/installed" ] && echo "// agent ran after set-up" >> lib/csvline.js',
    });
    expect(ok.result.agent_setup?.finished_at).toBeTruthy();
    expect(await readFile(join(ok.dir, 'agent', 'setup', 'stdout.txt'), 'utf8')).toBe('installing\n');
    expect(await readFile(join(ok.dir, 'agent', 'patch.diff'), 'utf8')).toContain(
      '+// agent ran after set-up',
    );

    const failed = await trial(task('berth__csvline-1'), {
      setup: 'echo "no such package" >&2; exit 7',
      command: 'touch should-not-run',
    });
    expect(failed.result.berth.status).toBe('error');
    expect(failed.result.exception_info?.exception_type).toBe('AgentSetupError');
    expect(failed.result.verifier_result).toBeNull();
    expect(failed.result.agent_execution).toBeNull();
    expect(await readFile(join(failed.dir, 'agent', 'setup', 'stderr.txt'), 'utf8')).toBe(
      'no such package\n',
    );
    expect(await readFile(join(failed.dir, 'agent', 'setup', 'return-code.txt'), 'utf8')).toBe('7\n');

    const slow = await trial(task('berth__csvline-1'), {
      setup: 'sleep 30',
      setupTimeoutSec: 1,
      command: 'true',
    });
    expect(slow.result.exception_info?.exception_type).toBe('AgentSetupTimeoutError');
    expect(slow.result.verifier_result).toBeNull();
  });
});

describe('agent names', () => {
  it("Harbor's agents from PyPI say in one line that they are out of reach; unknown names list the known", async () => {
    for (const name of ['aider', 'mini-swe-agent', 'openhands']) {
      const error = await createAgent(name).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(new RegExp(`^agent "${name}" is not available: .*PyPI`));
      expect((error as Error).message).not.toContain('\n');
    }
    const swe = await createAgent('swe-agent').catch((e: unknown) => e as Error);
    expect((swe as Error).message).toContain('-a predictions');
    const unknown = await createAgent('no-such-agent').catch((e: unknown) => e as Error);
    expect((unknown as Error).message).toMatch(
      /unknown agent "no-such-agent"; known agents: .*claude-code.*command/,
    );
    await expect(createAgent('command')).rejects.toThrow('--agent-command');
  });

  it('without a set-up command no set-up phase is recorded', () => {
    expect(new CommandAgent({ command: 'true' }).setup).toBeUndefined();
    expect(new CommandAgent({ command: 'true', setup: 'true' }).setup).toBeTypeOf('function');
  });
});
