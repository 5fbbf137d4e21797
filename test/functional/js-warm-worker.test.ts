/**
 * JavaScript samples under bwrap run in one warm worker per slot (the sandbox
 * is set up once; `node main.js` is forked in it per sample). These samples
 * attack what that sharing could leak: the worker, the folder, /tmp and
 * processes left for the next sample. One sample must never change another
 * sample's verdict.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX, detectSandbox } from '../../src/functional/sandbox.ts';
import type { ExecutionResult } from '../../src/functional/types.ts';
import { JS_PROBLEM, runSamples } from '../helpers/warm-samples.ts';

const problem = JS_PROBLEM;

function runAll(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  return runSamples(problem, completions, timeoutSec, 1024 * 1024 * 1024);
}

/** A completion whose body (JavaScript statements) runs, then returns 1 when `pass` holds. */
function passesIf(body: string, pass: string): string {
  return `  const fs = require('fs');\n  const cp = require('child_process');\n${body}\n  return (${pass}) ? 1 : 0;\n}\n`;
}

const right = '  return 1;\n}\n';
const wrong = '  return 0;\n}\n';
const sandbox = detectSandbox('auto');

describe.skipIf(sandbox.kind !== 'bwrap')('JavaScript samples in a warm worker', () => {
  it('runs in the warm worker: the parent of node is the worker, not a sandbox of its own', async () => {
    const [warm, plain] = await runAll([
      passesIf('', "fs.readFileSync('/proc/' + process.ppid + '/comm', 'utf8').trim().startsWith('python')"),
      right,
    ]);
    expect(warm?.result).toBe('passed');
    expect(plain?.result).toBe('passed');
  });

  it('leaves nothing for the next sample: no file in /sample or /tmp, no process', async () => {
    // The first sample leaves files and a detached process that keeps re-making a file; the second
    // passes only when it sees none of them (so a leak fails this test).
    const leave = [
      "  fs.writeFileSync('/sample/marker', 'x'); fs.writeFileSync('/tmp/marker', 'x');",
      "  fs.mkdirSync('/sample/node_modules/lodash', { recursive: true });",
      "  fs.writeFileSync('/sample/node_modules/lodash/index.js', 'module.exports = { isEqual: () => true };');",
      "  const bg = cp.spawn('node', ['-e', \"setInterval(() => { try { require('fs').writeFileSync('/sample/late', 'x'); } catch {} }, 2)\"], { detached: true, stdio: 'ignore' });",
      '  bg.unref();',
      "  const until = Date.now() + 4000; while (Date.now() < until && !fs.existsSync('/sample/late')) {}",
    ].join('\n');
    const look = [
      "  const others = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).map(Number)",
      '    .filter((pid) => pid !== process.pid && pid !== process.ppid && pid !== 1)',
      "    .filter((pid) => { try { return !/\\) Z /.test(fs.readFileSync('/proc/' + pid + '/stat', 'utf8')); } catch { return false; } });",
      '  const until = Date.now() + 50; while (Date.now() < until) {}',
    ].join('\n');
    const seen =
      "others.length === 0 && !['/sample/marker', '/tmp/marker', '/sample/late', '/sample/node_modules'].some((p) => fs.existsSync(p))";
    const [left, clean, fooled] = await runAll([
      passesIf(leave, "fs.existsSync('/sample/late') && fs.existsSync('/tmp/marker')"),
      passesIf(look, seen),
      // lodash planted by the first sample would make this wrong completion pass.
      wrong,
    ]);
    expect(left?.result).toBe('passed');
    expect(clean?.result).toBe('passed');
    expect(fooled?.passed).toBe(false);
  });

  it('a sample cannot forge answers through the worker or open its memory', async () => {
    const forge = [
      '  let refused = 0;',
      '  for (const what of ["fd/1", "mem"]) {',
      "    try { const fd = fs.openSync('/proc/' + process.ppid + '/' + what, 'w');",
      "      for (let id = 0; id < 10; id++) fs.writeSync(fd, JSON.stringify({ id, exit_code: 0, timed_out: false, stdout: '', stderr: '', dropped: 0, elapsed: 0 }) + '\\n');",
      '    } catch { refused++; }',
      '  }',
    ].join('\n');
    const [attack, after] = await runAll([passesIf(forge, 'refused === 2'), wrong]);
    expect(attack?.result).toBe('passed');
    expect(after?.passed).toBe(false);
  });

  it('a sample that kills its worker crashes alone; the next samples get a new worker', async () => {
    const results = await runAll(
      [
        // The worker is the sandbox's pid 1: SIGKILL from inside is ignored (as by bwrap's init in a
        // sandbox per sample), a signal it handles (SIGINT) ends it.
        "  process.kill(process.ppid, 'SIGKILL');\n  while (true) {}\n}\n",
        "  process.kill(process.ppid, 'SIGINT');\n  while (true) {}\n}\n",
        right,
        wrong,
      ],
      2,
    );
    expect(results.map((r) => [r.result, r.kind])).toEqual([
      ['timed out', 'timeout'],
      ['failed: the sample killed or stopped its worker', 'crash'],
      ['passed', undefined],
      [expect.stringContaining('f() is not 1'), 'test_failure'],
    ]);
  });

  it('signals, exit codes, syntax errors and output as a sandbox per sample reports them', async () => {
    const results = await runAll([
      "  process.kill(process.pid, 'SIGSEGV');\n}\n",
      '  process.exit(3);\n}\n',
      '  return 1;\n}\n}\n',
      "  process.stdout.write('x'.repeat(3 * 1024 * 1024));\n  return 0;\n}\n",
    ]);
    expect(results[0]).toMatchObject({
      kind: 'crash',
      result: expect.stringMatching(/^failed: killed by signal 11/),
    });
    expect(results[1]).toMatchObject({ kind: 'test_failure', result: 'failed: exit code 3' });
    expect(results[2]).toMatchObject({
      kind: 'compile_error',
      result: expect.stringContaining('SyntaxError'),
    });
    expect(results[3]).toMatchObject({
      kind: 'test_failure',
      result: expect.stringContaining('f() is not 1'),
    });
    expect(results[3]?.output?.length).toBeLessThanOrEqual(DEFAULT_SANDBOX.maxOutputBytes);
  });
});
