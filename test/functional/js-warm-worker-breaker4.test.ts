/**
 * Breaker round 4: attacks on the JavaScript warm worker (one sandbox per slot, node main.js
 * forked per sample). Each case: a hostile sample first, then wrong completions that must fail.
 */
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/functional/sandbox.ts';
import type { ExecutionResult } from '../../src/functional/types.ts';
import { JS_PROBLEM, PY_PROBLEM, runSamples } from '../helpers/warm-samples.ts';

const problem = JS_PROBLEM;

function runAll(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  return runSamples(problem, completions, timeoutSec, 1024 * 1024 * 1024);
}

/** A wrong completion that first runs `python` (a Python program) in the sandbox. */
function wrongAfterPython(python: string, wait = ''): string {
  return [
    "  const cp = require('child_process');",
    `  const r = cp.spawnSync('/usr/bin/python3', ['-c', ${JSON.stringify(python)}], { encoding: 'utf8' });`,
    wait,
    '  return 0;',
    '}',
    '',
  ].join('\n');
}

const wrong = '  return 0;\n}\n';
const sandbox = detectSandbox('auto');

describe.skipIf(sandbox.kind !== 'bwrap')('JavaScript warm worker: breaker round 4', () => {
  it('a sample cannot plant /node_modules/lodash for the next', async () => {
    const plant = [
      "  const fs = require('fs');",
      "  try { fs.mkdirSync('/node_modules/lodash', { recursive: true });",
      "    fs.writeFileSync('/node_modules/lodash/index.js', 'module.exports = { isEqual: () => true };'); } catch {}",
      '  return 0;',
      '}',
      '',
    ].join('\n');
    const results = await runAll([plant, wrong, wrong]);
    expect(results.map((r) => r.passed)).toEqual([false, false, false]);
  });

  it("a malformed answer on the worker's channel fails its sample, not the batch", async () => {
    const forge = [
      'import ctypes, os, json',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'fd = libc.syscall(438, os.pidfd_open(1), 1, 0)',
      'if fd >= 0: os.write(fd, "".join(json.dumps({"id": i, "result": 5}) + "\\n" for i in range(64)).encode())',
    ].join('\n');
    const results = await runAll([wrongAfterPython(forge), wrong]);
    expect(results.map((r) => r.passed)).toEqual([false, false]);
    expect(results[1]?.kind).toBe('test_failure');
  });

  it('a sample that chmods /tmp 0 does not fail the next', async () => {
    const results = await runAll([
      "  require('fs').chmodSync('/tmp', 0);\n  return 0;\n}\n",
      '  return 1;\n}\n',
    ]);
    expect(results.map((r) => r.passed)).toEqual([false, true]);
  });

  it('a sample that leaves a tree too deep to remove gets the next a fresh worker', async () => {
    const deep = [
      'import os',
      "os.unlink('/sample/main.js')",
      "os.mkdir('/sample/main.js')",
      "os.chdir('/sample/main.js')",
      'for i in range(3000):',
      "    os.mkdir('d')",
      "    os.chdir('d')",
    ].join('\n');
    const results = await runAll([wrongAfterPython(deep), '  return 1;\n}\n', wrong]);
    expect(results.map((r) => [r.passed, r.kind])).toEqual([
      [false, 'test_failure'],
      [true, undefined],
      [false, 'test_failure'],
    ]);
  });

  it('a process whose main thread exited does not outlive its sample', async () => {
    const survive = [
      'import os, threading, time, ctypes',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    def loop():',
      '        p = "/sample/node_modules/lodash/index.js"',
      '        while True:',
      '            try:',
      '                os.makedirs("/sample/node_modules/lodash", exist_ok=True)',
      '                if not os.path.exists(p):',
      '                    with open(p + ".t", "w") as f: f.write("module.exports={isEqual:()=>true};")',
      '                    os.rename(p + ".t", p)',
      '            except Exception: pass',
      '            time.sleep(0.0005)',
      '    threading.Thread(target=loop).start()',
      '    time.sleep(0.05)',
      '    ctypes.CDLL(None).pthread_exit(None)',
      'os._exit(0)',
    ].join('\n');
    const wait = '  const until = Date.now() + 500; while (Date.now() < until) {}';
    const results = await runAll([wrongAfterPython(survive, wait), wrong, wrong]);
    expect(results.map((r) => r.passed)).toEqual([false, false, false]);
  });
});

const pyProblem = PY_PROBLEM;

describe.skipIf(sandbox.kind !== 'bwrap')('Python warm worker: breaker round 4', () => {
  it("a Python sample cannot leave a process that forges later samples' answers", async () => {
    const attack = [
      '    import os, threading, time, ctypes, json',
      '    if os.fork() == 0:',
      '        os.setsid()',
      '        if os.fork() != 0:',
      '            os._exit(0)',
      '        libc = ctypes.CDLL(None, use_errno=True)',
      '        chan = libc.syscall(438, os.pidfd_open(1), 1, 0)',
      '        def loop():',
      "            seen = set(os.listdir('/proc'))",
      '            while True:',
      "                now = set(os.listdir('/proc'))",
      '                if now - seen:',
      '                    lines = "".join(json.dumps({"id": i, "result": "passed", "kind": "", "elapsed": 0.01}) + "\\n" for i in range(1, 64))',
      '                    try: os.write(chan, lines.encode())',
      '                    except Exception: pass',
      '                seen = now',
      '                time.sleep(0.001)',
      '        threading.Thread(target=loop).start()',
      '        time.sleep(0.05)',
      '        libc.pthread_exit(None)',
      '    time.sleep(0.3)',
      '    return 0',
      '',
    ].join('\n');
    const results = await runSamples(
      pyProblem,
      [attack, '    return 0\n', '    return 2\n'],
      5,
      512 * 1024 * 1024,
    );
    expect(results.map((r) => r.passed)).toEqual([false, false, false]);
  });
});

describe.skipIf(sandbox.kind !== 'bwrap')('JavaScript warm worker: what else a sample could leave', () => {
  it('System V shared memory, semaphores and queues are removed after each sample', async () => {
    const leave = [
      'import ctypes',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'assert libc.shmget(1234, 4096, 0o1666) >= 0',
      'assert libc.semget(1235, 1, 0o1666) >= 0',
      'assert libc.msgget(1236, 0o1666) >= 0',
    ].join('\n');
    const look = [
      "  const fs = require('fs');",
      "  const left = ['shm', 'sem', 'msg'].map((k) => fs.readFileSync('/proc/sysvipc/' + k, 'utf8').trim().split('\\n').length - 1);",
      '  return left.every((n) => n === 0) ? 1 : 0;',
      '}',
      '',
    ].join('\n');
    const check = [
      "  const cp = require('child_process');",
      `  const r = cp.spawnSync('/usr/bin/python3', ['-c', ${JSON.stringify(leave)}], { encoding: 'utf8' });`,
      "  const fs = require('fs');",
      "  const made = ['shm', 'sem', 'msg'].every((k) => fs.readFileSync('/proc/sysvipc/' + k, 'utf8').trim().split('\\n').length === 2);",
      '  return r.status === 0 && made ? 1 : 0;',
      '}',
      '',
    ].join('\n');
    const results = await runAll([check, look]);
    expect(results.map((r) => r.passed)).toEqual([true, true]);
  });
});
