/**
 * Issue 10 §1 in containers (real engine): the `command` agent, the oracle's solve.sh,
 * a multi-step task's agents and a verifier's test.sh replace every file berth writes
 * or reads in `/logs/agent`, `/logs/verifier` and `/logs/artifacts` by links to a host
 * file, a host folder, a fifo or a dangling host path (what a bind mount of the trial
 * folder would have made berth follow), plus a real fifo and a device node. The host
 * targets stay unchanged, berth's records are regular files with berth's content, and
 * the links are recorded, never followed.
 *
 * One trial per phase, each link kind planted on some of berth's names. The four rotations
 * that give every name every kind run on the local environment (test/trials/planted-links.test.ts),
 * where the targets exist. Here a planted link is a symlink in the container whose host target
 * does not exist there. The copy-out (`extractTarBeneath`) meets a tar `symlink` entry whatever
 * the kind of its target, and berth writes its records on the host with `writeFileAtomic`. A
 * rotation of the kinds over the names would change only the text of the links, not the code
 * they go through.
 */
import { cpSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { CommandAgent } from '../../src/agents/command.ts';
import { ScriptOracleAgent } from '../../src/agents/script-oracle.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import type { Task } from '../../src/tasks/task.ts';
import type { ExtendedTrialResult } from '../../src/trials/record.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { createVerifiers } from '../../src/verifiers/registry.ts';
import {
  COMMAND_AGENT_FILES,
  makeVictims,
  notCopiedPaths,
  plantLines,
  type Victims,
} from '../helpers/planted-links.ts';
import { CALC_DOCKERFILE, FIXTURES, fixtureImageMap, JOB_ID, skipDocker, tempDir } from './helpers.ts';

let victims: Victims;
beforeAll(async () => {
  victims = await makeVictims();
});
afterAll(async () => {
  await victims?.remove();
});

const provider = new DockerEnvironmentProvider({ imageMap: fixtureImageMap() });

async function trial(task: Task, agent: Agent): Promise<{ result: ExtendedTrialResult; dir: string }> {
  const dir = join(tempDir('berth-planted-'), 'trial');
  const result = await runTrial({
    task,
    agent,
    attempt: 1,
    trialName: 't',
    trialDir: dir,
    jobId: JOB_ID,
    source: 'test',
    providers: [provider],
    verifiers: createVerifiers(),
  });
  return { result, dir };
}

const text = (...p: string[]) => readFileSync(join(...p), 'utf8');
const regular = (path: string) => lstatSync(path).isFile();
/** A real fifo and a block device node (loop0 on the host's numbering) in `base`. */
const specialLines = (base: string) => [
  `mkfifo "${base}/fifo-here"`,
  `mknod "${base}/disk" b 7 0 2>/dev/null || true`,
];

/** A SWE-bench row with its own Dockerfile (built on the local base image), graded on the agent's diff. */
function swebenchTask(): Promise<Task[]> {
  const testPatch = [
    'diff --git a/tests/test_calc.py b/tests/test_calc.py',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/tests/test_calc.py',
    '@@ -0,0 +1,6 @@',
    '+import sys',
    '+sys.path.insert(0, ".")',
    '+from calc import add',
    '+print("TAP version 13")',
    '+print("1..1")',
    '+print(("ok" if add(2, 3) == 5 else "not ok") + " 1 - test_add")',
    '',
  ].join('\n');
  const row = {
    instance_id: 'calc-1',
    repo: 'berth/calc',
    problem_statement: 'add() subtracts',
    test_patch: testPatch,
    FAIL_TO_PASS: ['test_add'],
    PASS_TO_PASS: [],
    dockerless: { test_cmd: 'python3 tests/test_calc.py', parser: 'tap' },
    dockerfile: CALC_DOCKERFILE,
  };
  const file = join(tempDir('berth-planted-row-'), 'rows.jsonl');
  writeFileSync(file, `${JSON.stringify(row)}\n`);
  return loadSwebench(file);
}

describe.skipIf(skipDocker)('links planted where berth writes or reads (real engine)', () => {
  it('command agent on a SWE-bench row', async () => {
    const [task] = await swebenchTask();
    const agent = new CommandAgent({
      command: [
        'base="$BERTH_AGENT_LOG_DIR"',
        ...plantLines(victims, '$base', COMMAND_AGENT_FILES, 0),
        ...specialLines('$base'),
        'sed -i "s/a - b/a + b/" calc.py',
        'exit 3',
      ].join('\n'),
    });
    const { result, dir } = await trial(task as Task, agent);
    victims.unchanged();
    expect(result.exception_info).toBeNull();
    expect(result.berth.status).toBe('resolved');
    expect(text(dir, 'agent', 'command', 'return-code.txt')).toBe('3\n');
    expect(text(dir, 'agent', 'exit-code.txt')).toBe('3\n');
    expect(text(dir, 'agent', 'instruction.md')).toBe('add() subtracts');
    expect(JSON.parse(text(dir, 'agent', 'prediction.json')).model_patch).toContain('+    return a + b');
    expect(text(dir, 'agent', 'patch.diff')).toContain('+    return a + b');
    for (const name of ['apply.log', 'command/command.txt'])
      expect(regular(join(dir, 'agent', name))).toBe(true);
    for (const name of ['reward.txt', 'test-output.txt', 'report.json'])
      expect(regular(join(dir, 'verifier', name))).toBe(true);
    expect(text(dir, 'verifier', 'reward.txt')).toBe('1\n');
    const skipped = notCopiedPaths(result.berth.not_copied?.agent);
    for (const name of [...COMMAND_AGENT_FILES, 'fifo-here', 'disk']) expect(skipped, name).toContain(name);
  });

  it("the oracle's solve.sh", async () => {
    const taskDir = join(tempDir('berth-planted-task-'), 'calc');
    cpSync(join(FIXTURES, 'tasks', 'calc'), taskDir, { recursive: true });
    writeFileSync(
      join(taskDir, 'solution', 'solve.sh'),
      [
        '#!/bin/bash',
        // Rotations 0 and 1: each of the four kinds among the six names.
        ...plantLines(victims, '/logs/agent', ['oracle.txt', 'exit-code.txt', 'instruction.md'], 0),
        ...plantLines(victims, '/logs/verifier', ['reward.txt', 'reward.json', 'test-stdout.txt'], 1),
        ...specialLines('/logs/agent'),
        "sed -i 's/a - b/a + b/' /app/calc.py",
        'exit 5',
        '',
      ].join('\n'),
    );
    const { result, dir } = await trial(loadHarborTask(taskDir), new ScriptOracleAgent());
    victims.unchanged();
    // The verifier reset /logs/verifier: the real reward counts, the planted links are gone.
    expect(result.verifier_result?.rewards).toEqual({ reward: 1 });
    expect(text(dir, 'agent', 'exit-code.txt')).toBe('5\n');
    expect(text(dir, 'verifier', 'reward.txt')).toBe('1\n');
    expect(regular(join(dir, 'verifier', 'test-stdout.txt'))).toBe(true);
    const skipped = notCopiedPaths(result.berth.not_copied?.agent);
    for (const name of ['oracle.txt', 'exit-code.txt', 'instruction.md', 'fifo-here', 'disk'])
      expect(skipped, name).toContain(name);
  });

  it("a verifier's test.sh that plants links in /logs/verifier: recorded, never followed; a linked reward is refused", async () => {
    const taskDir = join(tempDir('berth-planted-task-'), 'calc');
    cpSync(join(FIXTURES, 'tasks', 'calc'), taskDir, { recursive: true });
    const plantAll = (names: string[]) => plantLines(victims, '/logs/verifier', names, 0);
    writeFileSync(
      join(taskDir, 'tests', 'test.sh'),
      [
        '#!/bin/bash',
        ...plantAll(['out/file-link', 'folder-link', 'fifo-link', 'dangling-link']),
        ...specialLines('/logs/verifier'),
        'echo 1 > /logs/verifier/reward.txt',
        '',
      ].join('\n'),
    );
    const counted = await trial(loadHarborTask(taskDir), new ScriptOracleAgent());
    victims.unchanged();
    expect(counted.result.verifier_result?.rewards).toEqual({ reward: 1 });
    const details = counted.result.berth.verifier_details as { not_copied?: string[] };
    expect(notCopiedPaths(details.not_copied).sort()).toEqual(
      ['dangling-link', 'disk', 'fifo-here', 'fifo-link', 'folder-link', 'out/file-link'].sort(),
    );
    expect(readdirSync(join(counted.dir, 'verifier')).sort()).toEqual([
      'out',
      'reward.txt',
      'test-stdout.txt',
    ]);

    // reward.txt itself a link to a host file holding 1: not followed, no reward.
    writeFileSync(join(victims.dir, '..', `berth-reward-one-${process.pid}`), '1\n');
    writeFileSync(
      join(taskDir, 'tests', 'test.sh'),
      `#!/bin/bash\nln -s '${join(victims.dir, '..', `berth-reward-one-${process.pid}`)}' /logs/verifier/reward.txt\n`,
    );
    const linked = await trial(loadHarborTask(taskDir), new ScriptOracleAgent());
    expect(linked.result.verifier_result?.rewards).toEqual({ reward: 0 });
    expect(linked.result.exception_info?.exception_type).toBe('VerifierOutputParseError');
    expect(linked.result.exception_info?.exception_message).toContain('not a regular file (symlink');
  });

  it('a multi-step task whose agents plant links in every log folder (the final strategy)', async () => {
    const taskDir = join(tempDir('berth-planted-steps-'), 'steps-gate');
    cpSync(join(FIXTURES, '..', 'harbor-features', 'steps-gate'), taskDir, { recursive: true });
    // The fixture under Harbor's `final` strategy: this trial is also harbor-features.test.ts's
    // check that `final` takes the last step's rewards (one solved three-step trial for both).
    const toml = join(taskDir, 'task.toml');
    writeFileSync(
      toml,
      readFileSync(toml, 'utf8').replace(
        'multi_step_reward_strategy = "mean"',
        'multi_step_reward_strategy = "final"',
      ),
    );
    for (const [step, rotation] of [
      ['first', 0],
      ['second', 1],
    ] as const) {
      const solve = join(taskDir, 'steps', step, 'solution', 'solve.sh');
      const original = readFileSync(solve, 'utf8').replace('#!/bin/bash\n', '');
      writeFileSync(
        solve,
        [
          '#!/bin/bash',
          ...plantLines(victims, '/logs/agent', ['oracle.txt', 'exit-code.txt', 'setup.log'], rotation),
          ...plantLines(victims, '/logs/artifacts', ['manifest.json', 'a.txt', 'b.txt', 'sub/x'], rotation),
          ...plantLines(victims, '/logs/verifier', ['reward.json', 'env.txt'], rotation),
          original,
        ].join('\n'),
      );
    }
    process.env.BERTH_FIXTURE_GREETING = 'hi';
    const { result, dir } = await trial(loadHarborTask(taskDir), new ScriptOracleAgent());
    victims.unchanged();
    // The verdicts of the unplanted fixture (test/docker/harbor-features.test.ts).
    expect(result.step_results?.map((s) => [s.step_name, s.verifier_result?.rewards])).toEqual([
      ['first', { reward: 1, quality: 0.5 }],
      ['second', { reward: 1 }],
      ['third', { reward: 0 }],
    ]);
    // `final`: the last step's rewards, not the mean (2/3 under the fixture's own `mean`).
    expect(result.verifier_result?.rewards).toEqual({ reward: 0 });
    expect(result.berth.status).toBe('unresolved');
    for (const step of ['first', 'second']) {
      const manifest = JSON.parse(text(dir, 'steps', step, 'artifacts', 'manifest.json'));
      expect(manifest[0]).toMatchObject({ source: '/logs/artifacts' });
      expect(notCopiedPaths(manifest[0].not_copied).sort()).toEqual([
        'a.txt',
        'b.txt',
        'manifest.json',
        'sub/x',
      ]);
      expect(text(dir, 'steps', step, 'artifacts', 'a.txt').trim()).toBe('agent');
      // Only the first step has a setup.sh: its log is berth's record.
      if (step === 'first') expect(regular(join(dir, 'steps', step, 'agent', 'setup.log'))).toBe(true);
    }
    const skipped = notCopiedPaths(result.berth.not_copied?.agent);
    expect(skipped).toContain('oracle.txt');
    expect(skipped).toContain('exit-code.txt');
  });
});
