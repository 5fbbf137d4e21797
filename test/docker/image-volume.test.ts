/**
 * A task whose image declares a VOLUME (as Terminal-Bench tasks built FROM postgres or mysql do)
 * runs: berth covers the path with a capped tmpfs of its own, holding the image's files with their
 * owner and mode, instead of the engine's anonymous volume (src/environments/docker/image-volumes.ts),
 * and verifies in a fresh container, where the path holds the image's files again. Real engine, a
 * local image (berth-base plus `VOLUME /var/lib/data`: nothing is pulled), the real `berth run`
 * with the oracle.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { BASE_IMAGE, skipDocker } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const temp = tempDirs();
const tag = `berth-test-volume:p${process.pid}`;
afterAll(async () => {
  await execa('docker', ['rmi', '-f', tag], { reject: false });
  await temp.cleanup();
});

const write = (dir: string, path: string, text: string) => {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text, { mode: 0o755 });
};

describe.skipIf(skipDocker)('an image that declares a VOLUME', () => {
  it("runs green with the oracle: the path is berth's tmpfs with the image's files, owner and mode", async () => {
    const work = await temp.make('berth-image-volume-');
    // The local base with a data folder of its own user (as postgres's image has) and a VOLUME.
    const base = join(work, 'base');
    write(
      base,
      'Dockerfile',
      [
        `FROM ${BASE_IMAGE}`,
        'RUN mkdir -p /var/lib/data && echo seed > /var/lib/data/seed.txt && chown -R 1000:1000 /var/lib/data && chmod 0750 /var/lib/data',
        'VOLUME /var/lib/data',
        '',
      ].join('\n'),
    );
    await execa('docker', ['build', '-q', '--network', 'none', '--label', 'berth.test=1', '-t', tag, base]);

    const task = join(work, 'task');
    write(
      task,
      'task.toml',
      [
        'version = "1.0"',
        '[agent]',
        'timeout_sec = 120.0',
        '[verifier]',
        'timeout_sec = 120.0',
        '[environment]',
        'memory_mb = 512',
        'storage_mb = 200',
        'allow_internet = false',
        '',
      ].join('\n'),
    );
    write(task, 'environment/Dockerfile', `FROM ${tag}\nWORKDIR /app\n`);
    write(task, 'instruction.md', 'Copy the seed of /var/lib/data into /app/answer.txt.\n');
    // The oracle uses the volume as a service would (writes there), and leaves its answer in /app.
    write(
      task,
      'solution/solve.sh',
      [
        '#!/bin/bash',
        'set -euo pipefail',
        "# In the agent's container too the path is a tmpfs, not the engine's volume.",
        'grep -q "^tmpfs /var/lib/data tmpfs " /proc/mounts',
        'echo written > /var/lib/data/service.db',
        'cp /var/lib/data/seed.txt /app/answer.txt',
        '',
      ].join('\n'),
    );
    // The verifier's container: the path is a capped noexec tmpfs (not the engine's volume), it
    // holds the image's files with their owner and mode, and not what the oracle wrote there.
    write(
      task,
      'tests/test.sh',
      [
        '#!/bin/bash',
        'm=$(grep " /var/lib/data " /proc/mounts); echo "mount: $m"',
        'own=$(stat -c "%u:%g %a" /var/lib/data); echo "owner: $own"',
        'ls -la /var/lib/data',
        'case "$m" in "tmpfs /var/lib/data tmpfs "*noexec*size=204800k*) ;; *) echo "not berth tmpfs"; exit 0 ;; esac',
        '[ "$own" = "1000:1000 750" ] || exit 0',
        '[ "$(cat /var/lib/data/seed.txt)" = seed ] || exit 0',
        '[ ! -e /var/lib/data/service.db ] || { echo "the agent container volume reached the verifier"; exit 0; }',
        '[ "$(cat /app/answer.txt)" = seed ] && echo 1 > /logs/verifier/reward.txt',
        '',
      ].join('\n'),
    );

    const run = spawnSync(
      process.execPath,
      [bin, 'run', '-p', task, '-a', 'oracle', '--jobs-dir', work, '--job-name', 'j'],
      { env: { ...process.env, CI: '1' }, encoding: 'utf8', timeout: 600_000 },
    );
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const trial = readdirSync(join(work, 'j')).find((n) => n.startsWith('task'));
    expect(trial, `${run.stdout}\n${run.stderr}`).toBeDefined();
    const dir = join(work, 'j', trial as string);
    const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    const stdout = (() => {
      try {
        return readFileSync(join(dir, 'verifier', 'test-stdout.txt'), 'utf8');
      } catch {
        return '';
      }
    })();
    const berth = `${JSON.stringify(result.berth, null, 2)}\n${stdout}`;
    expect(result.berth.status, berth).toBe('resolved');
    expect(result.berth.tampering?.findings ?? [], berth).toEqual([]);
  }, 900_000);
});
