/**
 * docs/coming-from-harbor.md: every berth line it maps from Harbor's README and the seeds that
 * runs offline is written there as it runs here, and runs as the document says.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'berth.js');
const doc = readFileSync(join(root, 'docs', 'coming-from-harbor.md'), 'utf8');

function berth(args: string[]) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CI: '1' },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('docs/coming-from-harbor.md', () => {
  it("berth run --help lists Harbor's flags", () => {
    expect(doc).toContain('| `harbor run --help` | `berth run --help` |');
    const help = berth(['run', '--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '-k, --attempts',
      '-n, --concurrency',
      '-o, --jobs-dir',
      '-c, --config',
      '-e, --env',
      '-q, --quiet',
      '--debug',
      '-r, --max-retries',
      '--retry-include',
      '--retry-exclude',
      '--ve <NAME=VALUE>',
      '--force-build',
      '--no-delete',
      '--agent-setup-timeout-multiplier',
      '--disable-verification',
      '--artifact',
      '--override-cpus',
      '-d, --dataset',
    ])
      expect(help.stdout).toContain(flag);
  });

  it("README's --env daytona line: one line saying what berth runs instead", () => {
    const line = [
      'run',
      '--dataset',
      'terminal-bench@2.0',
      '--agent',
      'claude-code',
      '--model',
      'anthropic/claude-opus-4-1',
      '--n-concurrent',
      '100',
      '--env',
      'daytona',
    ];
    expect(doc).toContain('`berth run ... --env daytona` says in one line');
    const run = berth(line);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain("Harbor's daytona environment is not part of berth");
  });

  it("the seed's -p TASK -a oracle and -p TASKS -a nop lines, on a local dataset of SWE-bench rows", async () => {
    // The Kotlin Benchmark's task needs its JVM base images; the same line on the bundled mini rows
    // (Harbor task folders run the same way in test/docker/run-cli.test.ts).
    expect(doc).toContain('| `berth run -p tasks/ankidroid_Anki-Android-18903 -a oracle` |');
    expect(doc).toContain('`-p tasks -a nop` is tested');
    const jobs = await temp.make('berth-coming-from-harbor-');
    const mini = join(fixturesDir, 'swebench', 'mini.jsonl');
    const oracle = berth(['run', '-p', mini, '-a', 'oracle', '-o', jobs, '--job-name', 'oracle']);
    expect(oracle.code, oracle.stderr).toBe(0);
    expect(oracle.stdout).toMatch(/^resolved 2\/2 /m);
    const nop = berth(['run', '-p', mini, '-a', 'nop', '-o', jobs, '--job-name', 'nop']);
    expect(nop.code, nop.stderr).toBe(0);
    expect(nop.stdout).toMatch(/^resolved 0\/2 /m);
  });
});
