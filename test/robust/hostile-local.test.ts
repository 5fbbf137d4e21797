/**
 * Hostile predictions against the local environment (the bundled DockerLess sample): a patch
 * whose conftest.py starts a detached daemon that rewrites job results, one that SIGKILLs
 * berth, one that swaps `tests/` for a symlink to a host folder, and a result.json changed
 * between two runs of a job. Each must leave berth, its results and the host intact.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { probeIsolation } from '../../src/sandbox/isolation.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const dataset = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
type Row = { instance_id: string; dockerless: { files: Record<string, string> } };
const rows = readFileSync(dataset, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Row);
const row = (id: string) => rows.find((r) => r.instance_id === id) as Row;

const isolated = probeIsolation().method !== undefined;

function berth(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('node', [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
    timeout: 240_000,
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** A patch (git diff) turning the row's files into what `change` makes of them. */
async function patchFor(id: string, change: (dir: string) => Promise<void>): Promise<string> {
  const dir = await temp.make('berth-hostile-repo-');
  for (const [path, text] of Object.entries(row(id).dockerless.files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'base');
  await change(dir);
  await git('add', '-A');
  return `${(await git('diff', '--cached', '--binary')).stdout}\n`;
}

async function predictions(entries: [string, string][]): Promise<string> {
  const file = join(await temp.make('berth-hostile-pred-'), 'predictions.jsonl');
  const lines = entries.map(([id, patch]) =>
    JSON.stringify({ instance_id: id, model_name_or_path: 'hostile', model_patch: patch }),
  );
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** pids of the processes whose command line holds `token`. */
function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmdline.includes(token) && !/^\d+ \(.*\) [ZX] /.test(stat)) found.push(Number(name));
    } catch {}
  }
  return found;
}

/** Every result.json under `root`, with its content. */
function results(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'result.json') out.set(path, readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * conftest.py that (at pytest start-up, reported in pytest's header) starts a detached
 * daemon (setsid, fds closed) that later sets every result.json under `jobsRoot` to reward
 * 1, and SIGKILLs every process it can see running berth.
 */
function hostileConftest(jobsRoot: string, token: string, delaySec: number): string {
  const daemon = [
    'import json, os, sys, time',
    `time.sleep(${delaySec})`,
    `for d, _, fs in os.walk(${JSON.stringify(jobsRoot)}):`,
    '    for f in fs:',
    "        if f == 'result.json':",
    '            p = os.path.join(d, f)',
    '            try:',
    "                r = json.load(open(p)); r['reward'] = 1",
    "                r.setdefault('verifier_result', {})",
    "                json.dump(r, open(p, 'w'))",
    '            except Exception: pass',
    'time.sleep(60)',
  ].join('\n');
  return [
    'import os, signal, subprocess, sys',
    `DAEMON = ${JSON.stringify(daemon)}`,
    'def pytest_report_header(config):',
    '    lines = []',
    `    p = subprocess.Popen(["setsid", sys.executable, "-c", DAEMON, ${JSON.stringify(token)}],`,
    '        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,',
    '        close_fds=True, start_new_session=True)',
    '    lines.append("hostile: daemon started %d" % p.pid)',
    '    for pid in os.listdir("/proc"):',
    '        if not pid.isdigit() or int(pid) == os.getpid(): continue',
    '        try:',
    '            cmd = open("/proc/%s/cmdline" % pid).read()',
    '        except OSError: continue',
    '        if "berth.js" in cmd:',
    '            try:',
    '                os.kill(int(pid), signal.SIGKILL); lines.append("hostile: killed %s" % pid)',
    '            except OSError as e: lines.append("hostile: kill %s failed: %s" % (pid, e))',
    '    lines.append("hostile: looked for berth")',
    '    return lines',
    '',
  ].join('\n');
}

describe.skipIf(!isolated)('local environment against hostile patches (sandboxed)', () => {
  it('a detached daemon neither outlives the trial nor changes any result; a berth killer cannot kill berth; a changed result is not kept on resume', async () => {
    const jobsRoot = await temp.make('berth-hostile-jobs-');
    // World-writable, so only the sandbox (not file modes) keeps the daemon out.
    await chmod(jobsRoot, 0o777);
    const jobs = join(jobsRoot, 'jobs');
    const other = join(jobsRoot, 'other-job');
    await mkdir(join(other, 't__1'), { recursive: true, mode: 0o777 });
    await writeFile(join(other, 't__1', 'result.json'), '{"reward": 0}\n', { mode: 0o666 });
    const token = `berth-hostile-${randomBytes(6).toString('hex')}`;
    const conftest = hostileConftest(jobsRoot, token, 2);
    const patch = await patchFor('berth__durations-1', (dir) =>
      writeFile(join(dir, 'conftest.py'), conftest),
    );
    const patch2 = await patchFor('berth__intervals-1', (dir) =>
      writeFile(join(dir, 'conftest.py'), conftest),
    );
    const preds = await predictions([
      ['berth__durations-1', patch],
      ['berth__intervals-1', patch2],
    ]);
    const args = ['run', '-p', dataset, '-a', 'predictions', '--predictions', preds, '--jobs-dir', jobs];
    const run = berth([...args, '--job-name', 'hostile']);
    // berth was not killed (137) and finished both trials.
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/resolved 0\/2/);
    const job = join(jobs, 'hostile');
    expect(existsSync(join(job, '.berth.lock'))).toBe(false);
    // The hostile code did run: its daemon started and it looked for berth, killing nothing.
    for (const trial of ['berth__durations-1__1', 'berth__intervals-1__1']) {
      const log = await readFile(join(job, trial, 'verifier', 'test-output.txt'), 'utf8');
      expect(log).toMatch(/hostile: daemon started \d+/);
      expect(log).toContain('hostile: looked for berth');
      expect(log).not.toContain('hostile: killed');
    }
    const before = results(jobsRoot);
    expect(before.size).toBeGreaterThanOrEqual(3);
    // The daemon would have rewritten the results after 2 s: wait past that.
    await sleep(4000);
    expect(processesWith(token)).toEqual([]);
    expect(results(jobsRoot)).toEqual(before);

    // Resume: an unchanged job keeps both trials; a changed result.json is run again.
    const trialResult = join(job, 'berth__durations-1__1', 'result.json');
    const forged = JSON.parse(await readFile(trialResult, 'utf8'));
    forged.reward = 1;
    forged.berth.resolved = true;
    await writeFile(trialResult, JSON.stringify(forged, null, 2));
    const again = berth([...args, '--job-name', 'hostile']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('berth__durations-1__1: result.json changed since berth wrote it');
    expect(again.stdout).toMatch(/resolved 0\/2/);
    expect(again.stdout).toContain('1 kept from a previous run');
    expect(JSON.parse(await readFile(trialResult, 'utf8')).berth.resolved).toBe(false);
    await sleep(3000);
    expect(processesWith(token)).toEqual([]);
  }, 200_000);

  it('SIGKILL of berth takes the running tests down with it', async () => {
    const token = `berth-sleeper-${randomBytes(6).toString('hex')}`;
    // A detached shell (own session) plus pytest itself sleeping: both hold the token.
    const conftest = [
      'import subprocess, time',
      `subprocess.Popen(["sh", "-c", "sleep 100; :", "${token}"], start_new_session=True)`,
      'time.sleep(100)',
      '',
    ].join('\n');
    const patch = await patchFor('berth__durations-1', (dir) =>
      writeFile(join(dir, 'conftest.py'), conftest),
    );
    const preds = await predictions([['berth__durations-1', patch]]);
    const jobs = await temp.make('berth-hostile-jobs-');
    const child = spawn(
      'node',
      [bin, 'run', '-p', dataset, '-a', 'predictions', '--predictions', preds, '--jobs-dir', jobs],
      { env: { ...process.env, CI: '1' }, stdio: 'ignore' },
    );
    let seen: number[] = [];
    for (let i = 0; i < 100 && seen.length === 0; i++) {
      await sleep(200);
      seen = processesWith(token);
    }
    expect(seen.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    let left = seen;
    for (let i = 0; i < 25 && left.length > 0; i++) {
      await sleep(200);
      left = processesWith(token);
    }
    expect(left).toEqual([]);
  }, 60_000);
});

describe('the reset of the test files never follows a symlink out of the repository', () => {
  for (const mode of ['sandboxed', 'unisolated'] as const) {
    it.skipIf(mode === 'sandboxed' && !isolated)(
      `${mode}: tests/ replaced by a link to a host folder`,
      async () => {
        const host = await temp.make('berth-hostile-host-');
        await writeFile(join(host, 'test_durations.py'), 'host file\n');
        const patch = await patchFor('berth__durations-1', async (dir) => {
          await unlink(join(dir, 'tests', 'test_durations.py'));
          await execa('rmdir', [join(dir, 'tests')]);
          await symlink(host, join(dir, 'tests'));
        });
        expect(patch).toContain('new file mode 120000');
        const preds = await predictions([['berth__durations-1', patch]]);
        const jobs = await temp.make('berth-hostile-jobs-');
        const run = berth(
          [
            'run',
            '-p',
            dataset,
            '-a',
            'predictions',
            '--predictions',
            preds,
            '--jobs-dir',
            jobs,
            '--job-name',
            'j',
          ],
          mode === 'unisolated' ? { BERTH_NO_ISOLATION: '1' } : {},
        );
        expect(run.code).toBe(0);
        expect(await readFile(join(host, 'test_durations.py'), 'utf8')).toBe('host file\n');
        // The patch applied, and the tests ran on the repository's own test file.
        const result = JSON.parse(
          await readFile(join(jobs, 'j', 'berth__durations-1__1', 'result.json'), 'utf8'),
        );
        expect(result.berth.patch_apply).toBeTruthy();
        expect(result.berth.status).toBe('unresolved');
      },
      120_000,
    );
  }
});
