/** `berth run -a command` end to end: the CLI spawned on the bundled DockerLess sample. */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runReportSchema } from '../../src/reporters/json.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const rows = readFileSync(sample, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, string>);

function berth(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

describe('berth run -a command', () => {
  it('a shell agent applying the gold fix resolves; --model is the prediction model; secrets stay out of the job folder', async () => {
    const kit = await temp.make('berth-cli-kit-');
    await chmod(kit, 0o755); // --agent-mount: the sandbox uid reads it
    for (const r of rows) await writeFile(join(kit, `${r.instance_id}.diff`), r.patch as string);
    const jobs = await temp.make('berth-cli-jobs-');
    const args = [
      'run',
      ...['-p', sample, '-i', 'berth__toposort-1', '-a', 'command'],
      ...['--agent-command', 'git apply "$KIT/$BERTH_TASK_NAME.diff" && printf %s "$UPSTREAM_TOKEN" | wc -c'],
      ...[
        '--agent-env',
        `KIT=${kit}`,
        '--agent-mount',
        kit,
        '--agent-env',
        'UPSTREAM_TOKEN',
        '--model',
        'acme/gold-1',
      ],
      ...['--jobs-dir', jobs, '--job-name', 'cmd'],
    ];
    const run = berth([...args, '--json'], { UPSTREAM_TOKEN: 'tok-0123456789' });
    expect(run.stderr).toContain('resolved 1/1 (100.0%)');
    expect(run.code).toBe(0);
    const report = runReportSchema.parse(JSON.parse(run.stdout));
    expect(report).toMatchObject({ agent: 'command', resolved: 1, total: 1 });
    const trial = join(jobs, 'cmd', 'berth__toposort-1__1');
    // The value reached the agent (its length printed), the job folder holds only the name.
    expect(readFileSync(join(trial, 'agent', 'command', 'stdout.txt'), 'utf8')).toBe('14\n');
    const config = JSON.parse(readFileSync(join(jobs, 'cmd', 'config.json'), 'utf8'));
    expect(config.berth.options.agent_env).toEqual([`KIT=${kit}`, 'UPSTREAM_TOKEN=***']);
    expect(config.berth.options.model).toBe('acme/gold-1');
    expect(allText(join(jobs, 'cmd'))).not.toContain('tok-0123456789');
    const prediction = JSON.parse(readFileSync(join(trial, 'agent', 'prediction.json'), 'utf8'));
    expect(prediction).toMatchObject({ instance_id: 'berth__toposort-1', model_name_or_path: 'acme/gold-1' });
    expect(prediction.model_patch).toContain('diff --git a/src/toposort.js b/src/toposort.js');
    const result = JSON.parse(readFileSync(join(trial, 'result.json'), 'utf8'));
    // Harbor's AgentInfo: `-m PROVIDER/NAME` split on its first `/`.
    expect(result.agent_info).toMatchObject({
      name: 'command',
      model_info: { name: 'gold-1', provider: 'acme' },
    });

    // Resuming the job with another command is refused before anything runs.
    const changed = args.map((a) => (a.startsWith('git apply') ? 'true' : a));
    const resumed = berth(changed, { UPSTREAM_TOKEN: 'tok-0123456789' });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('agent_command');
  });

  it('-a claude-code needs -m, -a aider is out of reach; misused options are usage errors (exit 2)', () => {
    const claude = berth(['run', '-p', sample, '-a', 'claude-code']);
    expect(claude.code).toBe(2);
    expect(claude.stderr).toContain('agent "claude-code" needs a model: -m PROVIDER/NAME');
    const aider = berth(['run', '-p', sample, '-a', 'aider']);
    expect(aider.code).toBe(2);
    expect(aider.stderr).toContain('agent "aider" is not available: aider comes from PyPI');
    const badOption = berth(
      ['run', '-p', sample, '-a', 'codex', '-m', 'openai/gpt-5', '--ak', 'max_turns=3'],
      { OPENAI_API_KEY: 'sk-test' },
    );
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain(
      '--ak max_turns: codex has no option "max_turns"; its options: reasoning_effort',
    );
    const akForOracle = berth(['run', '-p', sample, '--ak', 'max_turns=3']);
    expect(akForOracle.code).toBe(2);
    expect(akForOracle.stderr).toContain('--ak only apply to installed agents');

    const noCommand = berth(['run', '-p', sample, '-a', 'command']);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain('--agent-command');
    // Harbor's command lines pass --model with the oracle: ignored, with a warning (the limit stops the run early).
    const modelForOracle = berth(['run', '-p', sample, '--model', 'x', '--model-max-calls', '0']);
    expect(modelForOracle.stderr).toContain('-m/--model is ignored: agent `oracle` calls no model');
    const unsetEnv = berth([
      'run',
      '-p',
      sample,
      '-a',
      'command',
      '--agent-command',
      'true',
      '--agent-env',
      'BERTH_TEST_UNSET_VAR',
    ]);
    expect(unsetEnv.code).toBe(2);
    expect(unsetEnv.stderr).toContain('BERTH_TEST_UNSET_VAR is not set');
  });
});
