/**
 * An agent that plants links in its own log folder (mounted at /logs/agent in a container,
 * bound into the local sandbox) cannot make berth, which runs as root, write a host file
 * through them: the files berth writes there after the agent (exit-code.txt,
 * command/return-code.txt, prediction.json) follow no link.
 */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const task = fileURLToPath(new URL('../../examples/agents/edit-and-run', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));

async function run(args: string[], logs: string, targets: string[]) {
  const [a, b, c] = targets;
  const command = `ln -sf ${a} ${logs}/exit-code.txt; ln -sf ${b} ${logs}/command/return-code.txt; ln -sf ${c} ${logs}/prediction.json; exit 3`;
  return execa('node', [bin, 'run', ...args, '-a', 'command', '--agent-command', command], {
    reject: false,
    env: { ...process.env, CI: '1' },
  });
}

describe('links an agent plants in its log folder', () => {
  it.skipIf(skipDocker)('in a container: berth writes through none of them', async () => {
    const dir = tempDir('berth-links-');
    const targets = ['a', 'b', 'c'].map((n) => join(dir, `host-${n}`));
    const jobs = join(dir, 'jobs');
    const result = await run(
      [
        '-p',
        task,
        '--image-map',
        `debian:bookworm-slim=${BASE_IMAGE}`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'links',
      ],
      '/logs/agent',
      targets,
    );
    expect(result.exitCode, result.stderr).toBe(0);
    for (const target of targets) expect(existsSync(target)).toBe(false);
    const trial = join(
      jobs,
      'links',
      readdirSync(join(jobs, 'links')).find((d) => d.startsWith('edit-and-run')) as string,
    );
    expect(lstatSync(join(trial, 'agent', 'exit-code.txt')).isFile()).toBe(true);
  });

  it('in the local sandbox: berth writes through none of them', async () => {
    const dir = tempDir('berth-links-');
    const targets = ['a', 'b', 'c'].map((n) => join(dir, `host-${n}`));
    const jobs = join(dir, 'jobs');
    const result = await run(
      ['-p', sample, '-i', 'berth__toposort-1', '--jobs-dir', jobs, '--job-name', 'links'],
      '"$BERTH_AGENT_LOG_DIR"',
      targets,
    );
    expect(result.exitCode, result.stderr).toBe(0);
    for (const target of targets) expect(existsSync(target)).toBe(false);
    expect(lstatSync(join(jobs, 'links', 'berth__toposort-1__1', 'agent', 'prediction.json')).isFile()).toBe(
      true,
    );
  });
});
