/**
 * The per-sample sandbox (one sandbox per sample: Ruby, PHP, Go, C++... and Python's warm worker)
 * against samples that try to pass for berth itself:
 *
 * - what a sample prints is never read as berth's or bwrap's own failure: a sample printing
 *   `bwrap: ...`, `berth: cannot enter the cgroup`, or a missing-module message for a module the
 *   problem imports (and that is installed) fails alone; the run goes on, exit 0, verdicts written;
 * - no descriptor berth's own parent leaked without close-on-exec reaches a sample.
 *
 * Real `berth eval` processes started from bash with descriptors 100 and 1000 open on a marker
 * file, real toolchains, the real sandbox.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SANDBOX,
  detectSandbox,
  makeSampleDir,
  removeDir,
  runSandboxed,
} from '../../src/functional/sandbox.ts';
import { berthWithLeakedFds } from '../helpers/leaky-parent.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-sample-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sandboxed = detectSandbox().kind !== 'none';
const has = (cmd: string) => spawnSync(cmd, ['--version']).status === 0;

/** The file berth's parent leaks (descriptors 100 and 1000, not close-on-exec). */
const leaked = join(dir, 'leaked-by-the-parent');
writeFileSync(leaked, 'secret\n');

const problems = [
  // The tests require json (installed): a sample's own "cannot load such file -- json" is a lie.
  {
    task_id: 'Ruby/1',
    language: 'ruby',
    prompt: "require 'json'\ndef f\n",
    canonical_solution: '  1\nend\n',
    test: "\nraise 'wrong' unless f == 1\n",
    entry_point: 'f',
  },
  {
    task_id: 'Php/1',
    language: 'php',
    prompt: '<?php\nfunction f() {\n',
    canonical_solution: '  return 1;\n}\n',
    test: '\nif (f() != 1) { throw new Exception("wrong"); }\n',
    entry_point: 'f',
  },
  {
    task_id: 'Python/1',
    language: 'python',
    prompt: 'import json\ndef f():\n',
    canonical_solution: '    return 1\n',
    test: '\ndef check(candidate):\n    assert candidate() == 1\n',
    entry_point: 'f',
  },
  // No canonical solution: a claim of a missing module cannot be confirmed, the sample fails alone.
  {
    task_id: 'Ruby/2',
    language: 'ruby',
    prompt: "require 'json'\ndef f\n",
    test: "\nraise 'wrong' unless f == 1\n",
    entry_point: 'f',
  },
];

/** Ruby: passes when none of its descriptors is the parent's leaked file (nor 100 or 1000 open). */
const rubyNoLeak =
  "  fds = Dir.children('/proc/self/fd').map { |n| [n, (File.readlink(\"/proc/self/fd/#{n}\") rescue '')] }\n" +
  "  bad = fds.select { |n, l| l.include?('leaked-by-the-parent') || n == '100' || n == '1000' }\n" +
  '  raise "leaked: #{bad.inspect}" unless bad.empty?\n  1\nend\n';
const phpNoLeak =
  "  foreach (scandir('/proc/self/fd') as $n) {\n" +
  '    $l = @readlink("/proc/self/fd/$n");\n' +
  "    if ($n === '100' || $n === '1000' || ($l !== false && strpos($l, 'leaked-by-the-parent') !== false)) { throw new Exception(\"leaked: $n $l\"); }\n" +
  '  }\n  return 1;\n}\n';
const pyNoLeak =
  '    import os\n    for n in os.listdir("/proc/self/fd"):\n' +
  '        try:\n            link = os.readlink("/proc/self/fd/" + n)\n        except OSError:\n            link = ""\n' +
  '        if n in ("100", "1000") or "leaked-by-the-parent" in link:\n            raise Exception("leaked " + n)\n    return 1\n';

/** [task, completion, what the sample must get]. */
const samples: [string, string, 'passed' | 'failed'][] = [
  [
    'Ruby/1',
    '  $stderr.puts "bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted"\n  exit 1\nend\n',
    'failed',
  ],
  ['Ruby/1', "  $stderr.puts 'berth: cannot enter the cgroup'\n  exit 125\nend\n", 'failed'],
  [
    'Ruby/1',
    "  $stderr.puts 'prlimit: failed to set the RLIMIT_NPROC resource limit'\n  exit 1\nend\n",
    'failed',
  ],
  ['Ruby/1', "  $stderr.puts 'cannot load such file -- json'\n  exit 1\nend\n", 'failed'],
  ['Ruby/1', rubyNoLeak, 'passed'],
  ['Ruby/1', '  1\nend\n', 'passed'],
  [
    'Php/1',
    '  fwrite(STDERR, "bwrap: execvp php: No such file or directory\\n");\n  exit(1);\n}\n',
    'failed',
  ],
  ['Php/1', phpNoLeak, 'passed'],
  ['Python/1', '    raise ModuleNotFoundError("No module named \'json\'")\n', 'failed'],
  ['Python/1', pyNoLeak, 'passed'],
  ['Ruby/2', "  $stderr.puts 'cannot load such file -- json'\n  exit 1\nend\n", 'failed'],
  ['Ruby/2', '  1\nend\n', 'passed'],
];

describe.skipIf(!sandboxed)('a per-sample sandbox: the sample is never taken for berth', () => {
  it('samples printing berth/bwrap errors or missing modules fail alone; no leaked descriptor reaches them', (ctx) => {
    if (!has('ruby') || !has('php')) ctx.skip('ruby and php are not both installed here');
    const problemsFile = join(dir, 'problems.jsonl');
    const samplesFile = join(dir, 'samples.jsonl');
    writeFileSync(problemsFile, `${problems.map((p) => JSON.stringify(p)).join('\n')}\n`);
    writeFileSync(
      samplesFile,
      `${samples.map(([task_id, completion]) => JSON.stringify({ task_id, completion })).join('\n')}\n`,
    );
    // berth's parent leaves two descriptors open across exec.
    const out = berthWithLeakedFds(
      leaked,
      [
        'eval',
        '--problems',
        problemsFile,
        '--samples',
        samplesFile,
        '-n',
        '2',
        '--jobs-dir',
        join(dir, 'jobs'),
      ],
      dir,
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    const results = readFileSync(`${samplesFile}_results.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { task_id: string; passed: boolean; result: string });
    expect(results.map((r) => [r.task_id, r.passed ? 'passed' : 'failed'])).toEqual(
      samples.map(([task, , verdict]) => [task, verdict]),
    );
    // The liars' own words are their failure, not an error of the run.
    expect(results[0]?.result).toMatch(/^failed: bwrap: Can't mount proc/);
    expect(results[3]?.result).toBe('failed: cannot load such file -- json');
    expect(results[8]?.result).toBe("failed: No module named 'json'");
    expect(results[10]?.result).toBe('failed: cannot load such file -- json');
    const summary = JSON.parse(readFileSync(`${samplesFile}_berth.json`, 'utf8'));
    expect(summary.failures.error_of_run).toBeUndefined();
  }, 300_000);
});

describe.skipIf(!sandboxed)('runSandboxed with markStart: the sandbox started, or failed itself', () => {
  const run = async (argv: string[], readOnlyPaths: string[] = []) => {
    const workDir = await makeSampleDir(0);
    try {
      return await runSandboxed({
        argv,
        workDir,
        readOnlyPaths,
        slot: 0,
        options: DEFAULT_SANDBOX,
        timeoutSec: 30,
        markStart: true,
      });
    } finally {
      await removeDir(workDir);
    }
  };

  it('a command that prints bwrap-like errors started; its stdout comes without the mark', async () => {
    const out = await run(['sh', '-c', 'echo out; echo "bwrap: no" >&2; exit 1']);
    expect(out).toMatchObject({ started: true, exitCode: 1, stdout: 'out\n', stderr: 'bwrap: no\n' });
  });

  it('a sandbox that cannot be set up (a path to show that is not there) did not start', async (ctx) => {
    if (detectSandbox().kind !== 'bwrap') ctx.skip('only bwrap binds paths');
    const out = await run(['true'], [join(dir, 'no-such-folder')]);
    expect(out.started).toBe(false);
    expect(out.exitCode).not.toBe(0);
    expect(out.stderr).toMatch(/^bwrap: /);
  });
});
