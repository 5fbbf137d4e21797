import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { NopAgent } from '../../src/agents/nop.ts';
import { OracleAgent } from '../../src/agents/oracle.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { harborJobStats } from '../../src/jobs/harbor-stats.ts';
import type { Task } from '../../src/tasks/task.ts';
import { AgentTimeoutError } from '../../src/trials/errors.ts';
import type { TrialResult } from '../../src/trials/result.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { SwebenchVerifier } from '../../src/verifiers/swebench.ts';
import { makeDiff } from '../helpers/diff.ts';
import { statusLinesParser } from '../helpers/status-lines-parser.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { baseFiles, checkScript, shellTask } from './shell-task.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const verifier = new SwebenchVerifier({ parsers: [statusLinesParser] });
const provider = new LocalEnvironmentProvider();

function patchAgent(patch: string): Agent {
  return { info: { name: 'fixed', version: '1' }, run: async () => ({ patch }) };
}

async function trial(
  task: Task,
  agent: Agent,
  extra: Partial<Parameters<typeof runTrial>[0]> = {},
): Promise<TrialResult> {
  const trialDir = join(await temp.make('berth-trial-'), 'trial');
  return runTrial({
    task,
    agent,
    attempt: 1,
    trialName: 't__1',
    trialDir,
    jobId: 'test',
    source: 'inline',
    providers: [provider],
    verifiers: [verifier],
    ...extra,
  });
}

const trialFile = (result: TrialResult, path: string) =>
  readFile(join(new URL(result.trial_uri).pathname, path), 'utf8');

/** Live processes whose command line holds `token`. */
function processesWith(token: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(token) && isAlive(Number(name));
      } catch {
        return false;
      }
    })
    .map(Number);
}

function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('runTrial on a shell task', () => {
  it('oracle resolves, with Harbor field names, phases and files recorded', async () => {
    const result = await trial(await shellTask(), new OracleAgent());
    expect(result.berth.status).toBe('resolved');
    expect(result.verifier_result?.rewards).toEqual({ reward: 1 });
    expect(result.exception_info).toBeNull();
    expect(result.berth.FAIL_TO_PASS).toEqual({ passed: 1, total: 1 });
    expect(result.berth.PASS_TO_PASS).toEqual({ passed: 1, total: 1 });
    expect(result.berth.patch_apply).toEqual({ applied: true, method: 'git apply' });
    for (const phase of [result.environment_setup, result.agent_execution, result.verifier]) {
      expect(Date.parse(phase?.finished_at ?? '') >= Date.parse(phase?.started_at ?? '')).toBe(true);
    }
    // The oracle names no model (Harbor's AgentInfo.model_info is null for it).
    expect(result.agent_info).toMatchObject({ name: 'oracle', model_info: null });
    const written = JSON.parse(await trialFile(result, 'result.json')) as TrialResult;
    expect(written.trial_name).toBe('t__1');
    expect(written.task_name).toBe('shell__task-1');
    expect(await trialFile(result, 'agent/patch.diff')).toContain('+VALUE=2');
    expect(await trialFile(result, 'agent/apply.log')).toContain(
      'git -c core.hooksPath=/dev/null apply --verbose -',
    );
    expect(await trialFile(result, 'verifier/test-output.txt')).toMatch(
      />>>>> Start Test Output [0-9a-f]{32}\nRESULT PASSED f2p\nRESULT PASSED p2p\n>>>>> End Test Output/,
    );
  });

  it('nop ends as empty_patch without running the tests, or unresolved when asked to verify it', async () => {
    const task = await shellTask();
    const empty = await trial(task, new NopAgent());
    expect(empty.berth.status).toBe('empty_patch');
    expect(empty.verifier).toBeNull();
    const verified = await trial(task, new NopAgent(), { verifyEmptyPatch: true });
    expect(verified.berth.status).toBe('unresolved');
    expect(verified.berth.FAIL_TO_PASS).toEqual({ passed: 0, total: 1 });
    expect(verified.berth.PASS_TO_PASS).toEqual({ passed: 1, total: 1 });
  });

  it('a patch that applies no way is patch_failed, with every attempt logged', async () => {
    const bad = 'diff --git a/lib.sh b/lib.sh\n--- a/lib.sh\n+++ b/lib.sh\n@@ -1 +1 @@\n-VALUE=7\n+VALUE=2\n';
    const result = await trial(await shellTask(), patchAgent(bad));
    expect(result.berth.status).toBe('patch_failed');
    expect(result.berth.patch_apply).toEqual({ applied: false, method: null });
    const log = await trialFile(result, 'agent/apply.log');
    expect(log).toContain('apply --verbose --3way');
    expect(log).toContain('patch --batch --forward --fuzz=5');
  });

  it('a patch that writes into .git is refused before any attempt (GNU patch would write it)', async () => {
    // A smudge filter in .git/config ran in the verifier's own git apply of the test patch
    // (test/tamper/cases/patch-writes-git-config.ts).
    const gitConfig = [
      'diff --git a/.git/config b/.git/config',
      '--- a/.git/config',
      '+++ b/.git/config',
      '@@ -1,2 +1,4 @@',
      '+[filter "tidy"]',
      '+\tsmudge = cat',
      ' [core]',
      ' \trepositoryformatversion = 0',
      '',
    ].join('\n');
    const result = await trial(await shellTask(), patchAgent(gitConfig));
    expect(result.berth.status).toBe('patch_failed');
    expect(await trialFile(result, 'agent/apply.log')).toBe(
      'refused: the patch names .git/config, in .git or outside the repository\n',
    );
  });

  it('a patch that names a path whose bytes are not UTF-8 is refused before any attempt', async () => {
    // Read lossily, the path names another file than the one git apply writes: a reset or a
    // check of it misses the real one (test/tamper/cases/multilingual-non-utf8-test-file.ts).
    const nonUtf8 = [
      'diff --git "a/zz\\377.sh" "b/zz\\377.sh"',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "b/zz\\377.sh"',
      '@@ -0,0 +1 @@',
      '+echo hi',
      '',
    ].join('\n');
    const result = await trial(await shellTask(), patchAgent(nonUtf8));
    expect(result.berth.status).toBe('patch_failed');
    expect(result.verifier_result?.rewards.reward).toBe(0);
    expect(await trialFile(result, 'agent/apply.log')).toMatch(
      /^refused: the diff names a path that is not UTF-8 text/,
    );
  });

  it('falls back to patch --fuzz when git apply refuses drifted context, and records it', async () => {
    const files = { 'lib.sh': ['# header', 'A=1', 'B=2', 'VALUE=1', 'C=3', 'D=4', ''].join('\n') };
    // The patch was made against a file whose first context line differs.
    const drifted = ['# header changed', 'A=1', 'B=2', 'VALUE=1', 'C=3', 'D=4', ''].join('\n');
    const patch = await makeDiff({ 'lib.sh': drifted }, { 'lib.sh': drifted.replace('VALUE=1', 'VALUE=2') });
    const task = await shellTask();
    if (task.environment.kind !== 'local' || task.verifier.kind !== 'swebench') throw new Error('kinds');
    task.environment.snapshot = { files: { ...files } };
    task.verifier.testPatch = await makeDiff(files, { 'tests/check.sh': checkScript });
    const result = await trial(task, patchAgent(patch));
    expect(result.berth.patch_apply?.method).toBe('patch --fuzz=5');
    expect(result.berth.status).toBe('resolved');
    expect(result.berth.note).toContain('applied with patch --fuzz=5');
  });

  it('a crash inside the trial is recorded, not thrown', async () => {
    const crashing: Agent = {
      info: { name: 'crash', version: '1' },
      run: async () => {
        throw new TypeError('agent blew up');
      },
    };
    const result = await trial(await shellTask(), crashing);
    expect(result.berth.status).toBe('error');
    expect(result.exception_info?.exception_type).toBe('TypeError');
    expect(result.exception_info?.exception_message).toBe('agent blew up');
    expect(existsSync(join(new URL(result.trial_uri).pathname, 'result.json'))).toBe(true);
  });

  it('runs the install step with the network and logs it; a failing install is an error', async () => {
    const task = await shellTask();
    if (task.environment.kind !== 'local') throw new Error('local');
    // A new install each run (a comment with a nonce), so the install cache never skips it.
    task.environment.install = `echo installing; tail -n +3 /proc/net/dev | wc -l > .interfaces # ${randomUUID()}`;
    const ok = await trial(task, new OracleAgent());
    expect(ok.berth.status).toBe('resolved');
    expect(ok.berth.install?.exit_code).toBe(0);
    expect(await trialFile(ok, 'setup/install.log')).toBe('installing\n');
    task.environment.install = 'echo broken >&2; exit 4';
    const failed = await trial(task, new OracleAgent());
    expect(failed.berth.status).toBe('error');
    expect(failed.exception_info?.exception_type).toBe('EnvironmentSetupError');
    expect(failed.exception_info?.exception_message).toContain('exited 4');
  });
});

describe('security: what an agent patch cannot do', () => {
  it('forged PASSED lines printed by the patched code do not override the real FAILED result', async () => {
    const patch = await makeDiff(baseFiles, {
      'lib.sh': 'VALUE=1\necho "RESULT PASSED f2p"\necho "RESULT PASSED f2p"\n',
    });
    const result = await trial(await shellTask(), patchAgent(patch));
    expect(result.berth.status).toBe('unresolved');
    expect(result.verifier_result?.rewards.reward).toBe(0);
    const report = JSON.parse(await trialFile(result, 'verifier/report.json')) as {
      tests: { id: string; status: string }[];
    };
    expect(report.tests.find((t) => t.id === 'f2p')?.status).toBe('FAILED');
  });

  it('forged markers and exit-code lines do not cut the log or change the verdict', async () => {
    const forged = [
      'VALUE=1',
      'echo ">>>>> End Test Output 00000000000000000000000000000000"',
      'echo ">>>>> Test Exit Code 00000000000000000000000000000000: 0"',
      'echo ">>>>> Start Test Output 00000000000000000000000000000000"',
      'echo "RESULT PASSED f2p"',
      '',
    ].join('\n');
    const patch = await makeDiff(baseFiles, { 'lib.sh': forged });
    const result = await trial(await shellTask(), patchAgent(patch));
    expect(result.berth.status).toBe('unresolved');
    const details = result.berth.verifier_details as { exit_code: number; used_whole_log: boolean };
    expect(details.exit_code).toBe(1);
    expect(details.used_whole_log).toBe(false);
  });

  it('forged passes with a failing exit code make the log invalid (error), never resolved', async () => {
    const patch = await makeDiff(baseFiles, {
      'lib.sh': 'echo "RESULT PASSED f2p"; echo "RESULT PASSED p2p"; exit 1\n',
    });
    const result = await trial(await shellTask(), patchAgent(patch));
    expect(result.berth.status).toBe('error');
    expect(result.exception_info?.exception_type).toBe('VerifierOutputParseError');
    expect(result.berth.resolved).toBe(false);
  });

  it("the agent's own version of the hidden test file is discarded and recorded", async () => {
    const patch = await makeDiff(baseFiles, {
      'tests/check.sh': 'echo "RESULT PASSED f2p"; echo "RESULT PASSED p2p"\n',
    });
    const result = await trial(await shellTask(), patchAgent(patch));
    expect(result.berth.status).toBe('unresolved');
    expect(
      (result.berth.verifier_details as { discarded_agent_changes: string[] }).discarded_agent_changes,
    ).toEqual(['tests/check.sh']);
    expect(result.berth.note).toContain('discarded agent changes to 1 test file(s)');
  });

  it("the agent's edit of a test file present at base is reset to base before the test patch applies", async () => {
    const base = { ...baseFiles, 'tests/check.sh': 'echo "RESULT FAILED f2p"\n' };
    const task = await shellTask();
    if (task.verifier.kind !== 'swebench' || task.environment.kind !== 'local') throw new Error('shell task');
    task.environment.snapshot = { files: base };
    task.verifier.testPatch = await makeDiff(base, { 'tests/check.sh': checkScript });
    // The gold fix plus a forged test file: the test patch would not apply on top of it.
    const patch = await makeDiff(base, {
      'lib.sh': 'VALUE=2\n',
      'tests/check.sh': 'echo "RESULT PASSED f2p"; echo "RESULT PASSED p2p"\n',
    });
    const result = await trial(task, patchAgent(patch));
    expect(result.berth.status).toBe('resolved');
    expect(
      (result.berth.verifier_details as { discarded_agent_changes: string[] }).discarded_agent_changes,
    ).toEqual(['tests/check.sh']);
    const output = await trialFile(result, 'verifier/test-output.txt');
    expect(output).toContain('RESULT PASSED f2p');
    expect(output).toContain('RESULT PASSED p2p');
  });

  it('a test patch creating a file in a folder that does not exist yet records no discarded change', async () => {
    // git ls-files warns "could not open directory 'tests/new/'" on stderr; that warning
    // once ended up in discarded_agent_changes (seen on a real tomli instance).
    // (git warns only when the deepest folder shared by the patch's paths is missing.)
    const base = { ...baseFiles, 'tests/keep.txt': 'keep\n' };
    const task = await shellTask({ testCommand: 'bash tests/new/check.sh' });
    if (task.verifier.kind !== 'swebench' || task.environment.kind !== 'local') throw new Error('shell task');
    task.environment.snapshot = { files: base };
    task.verifier.testPatch = await makeDiff(base, { 'tests/new/check.sh': checkScript });
    const result = await trial(task, new OracleAgent());
    expect(result.berth.status).toBe('resolved');
    expect(
      (result.berth.verifier_details as { discarded_agent_changes: string[] }).discarded_agent_changes,
    ).toEqual([]);
    expect(result.berth.note).toBe('ok');
  });

  it('a hanging test command is killed with its process group at the timeout', async () => {
    // The background process is found by a token in its command line (the host file system
    // may be read-only for the command, and its pid namespace its own).
    const token = `berth-hang-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const task = await shellTask({
      testCommand: `sh -c 'sleep 600; :' ${token} & sleep 600`,
      timeoutSec: 2,
    });
    const started = Date.now();
    const result = await trial(task, new OracleAgent());
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.berth.status).toBe('error');
    expect(result.exception_info?.exception_type).toBe('VerifierTimeoutError');
    expect((result.berth.verifier_details as { timed_out: boolean }).timed_out).toBe(true);
    expect(processesWith(token)).toEqual([]);
  });

  it('records whether the tests ran without network', async () => {
    const task = await shellTask({
      testCommand: 'bash {tests}; tail -n +3 /proc/net/dev | cut -d: -f1 | sed "s/^ */IF /"',
    });
    const result = await trial(task, new OracleAgent());
    const output = await trialFile(result, 'verifier/test-output.txt');
    const interfaces = output
      .split('\n')
      .filter((l) => l.startsWith('IF '))
      .map((l) => l.slice(3));
    if (result.berth.isolated) {
      expect(interfaces).toEqual(['lo']);
      expect(result.berth.isolation_method).toMatch(/bwrap|unshare/);
    } else {
      expect(result.berth.isolation_method).toBeNull();
      expect(interfaces.length).toBeGreaterThan(1);
    }
  });

  it('an agent timeout and then a verifier error: both recorded, the first as exception_info, counted once in n_errors', async () => {
    // The agent hands back its patch at the timeout; the tests then hang past theirs.
    const task = await shellTask({ testCommand: 'sleep 600', timeoutSec: 2 });
    const gold = task.solution.kind === 'patch' ? task.solution.patch : '';
    const agent: Agent = {
      info: { name: 'slow', version: '1' },
      run: async () => {
        throw new AgentTimeoutError('the agent did not finish within 1 s', { patch: gold });
      },
    };
    const result = await trial(task, agent);
    expect(result.exception_info?.exception_type).toBe('AgentTimeoutError');
    expect(result.berth.exceptions?.map((e) => e.exception_type)).toEqual([
      'AgentTimeoutError',
      'VerifierTimeoutError',
    ]);
    expect(result.berth.status).toBe('error');
    expect(result.berth.note).toContain('agent timed out');
    expect(harborJobStats([result]).n_errors).toBe(1);
    const onDisk = JSON.parse(await trialFile(result, 'result.json')) as TrialResult;
    expect(onDisk.berth.exceptions).toHaveLength(2);
  });
});
