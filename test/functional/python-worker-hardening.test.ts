/**
 * The warm Python worker against samples that attack the worker itself (not
 * the machine): its memory, its file descriptors, its sample folders. One
 * sample must never change another sample's verdict nor lose the run.
 */
import { describe, expect, it } from 'vitest';
import { findExecutor } from '../../src/functional/executors/index.ts';
import { DEFAULT_SANDBOX, detectSandbox } from '../../src/functional/sandbox.ts';
import type { ExecutionResult } from '../../src/functional/types.ts';
import { PY_PROBLEM, runSamples } from '../helpers/warm-samples.ts';

const problem = PY_PROBLEM;

function runAll(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  return runSamples(problem, completions, timeoutSec, 512 * 1024 * 1024);
}

/** A completion that returns 1 (passes) when `probe` (Python statements) runs without an exception. */
function passesIf(probe: string): string {
  const body = probe
    .split('\n')
    .map((line) => `        ${line}`)
    .join('\n');
  return `    import os\n    try:\n${body}\n        return 1\n    except Exception:\n        return 0\n`;
}

const sandbox = detectSandbox('auto');

describe.skipIf(sandbox.kind === 'none')('the Python worker is out of reach of its samples', () => {
  it("a sample cannot open the worker's memory (read or write), its fds, nor ptrace it", async () => {
    const results = await runAll([
      passesIf("open('/proc/%d/mem' % os.getppid(), 'rb').close()"),
      passesIf("open('/proc/%d/mem' % os.getppid(), 'r+b').close()"),
      passesIf("os.write(os.open('/proc/%d/fd/1' % os.getppid(), os.O_WRONLY), b'')"),
      passesIf(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nif libc.ptrace(16, os.getppid(), None, None) != 0:\n    raise OSError(ctypes.get_errno(), 'ptrace')",
      ),
      passesIf(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nif libc.ptrace(0x4206, os.getppid(), None, None) != 0:\n    raise OSError(ctypes.get_errno(), 'seize')",
      ),
    ]);
    expect(results.map((r) => r.result)).toEqual(Array(5).fill('failed: '));
  });

  it('rewriting "failed: " in the worker\'s memory does not make later wrong samples pass', async () => {
    // The tester's attack: find the bytes in the worker's writable memory and overwrite them.
    const attack = `    import os, re
    pid = os.getppid()
    try:
        maps = open('/proc/%d/maps' % pid).read().splitlines()
        mem = open('/proc/%d/mem' % pid, 'r+b', buffering=0)
        for line in maps:
            m = re.match(r'([0-9a-f]+)-([0-9a-f]+) rw', line)
            if not m:
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            i = data.find(b'failed: ')
            while i >= 0:
                # A compact ASCII str: its length sits 24 (3.12+) or 32 (3.11) bytes before the text.
                for back in (24, 32):
                    if i >= back and data[i - back:i - back + 8] == (8).to_bytes(8, 'little'):
                        mem.seek(start + i - back)
                        mem.write((6).to_bytes(8, 'little'))
                        mem.seek(start + i)
                        mem.write(b'passed')
                i = data.find(b'failed: ', i + 1)
    except OSError:
        pass
    return 0
`;
    const results = await runAll([attack, '    return 2\n', '    return 3\n', '    return 1\n']);
    expect(results.map((r) => r.passed)).toEqual([false, false, false, true]);
  });

  it('a sample that fills the parent folder with guessed names loses only itself', async () => {
    const squat =
      "    import os\n    for i in range(200):\n        try:\n            os.mkdir('../s%d' % i)\n        except OSError:\n            pass\n    return 1\n";
    const results = await runAll([squat, ...Array(9).fill('    return 1\n')]);
    expect(results.map((r) => r.passed)).toEqual(Array(10).fill(true));
  });

  it('a sample cannot kill or stop its worker (pid 1); one that ends it crashes alone', async () => {
    // The worker is the sandbox's pid 1 (bwrap --as-pid-1, unshare --fork, docker): SIGKILL and
    // SIGSTOP from inside are ignored,
    // so those samples are judged on their own tests; SIGINT (which Python handles) ends the worker.
    const results = await runAll(
      [
        '    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 1\n',
        '    return 1\n',
        '    import os, signal\n    os.kill(os.getppid(), signal.SIGSTOP)\n    return 2\n',
        '    import os, signal, time\n    os.kill(os.getppid(), signal.SIGINT)\n    time.sleep(1)\n    return 1\n',
        '    return 1\n',
        '    return 2\n',
      ],
      2,
    );
    expect(results.map((r) => [r.passed, r.kind])).toEqual([
      [true, undefined],
      [true, undefined],
      [false, 'test_failure'],
      [false, 'crash'],
      [true, undefined],
      [false, 'test_failure'],
    ]);
  });

  it("a sample's files (in its folder, a sub-folder, beside it, in /tmp) are gone for the next", async () => {
    const results = await runAll([
      "    import os\n    open('a', 'w').write('x')\n    os.makedirs('d/e')\n    open('d/e/f', 'w').write('x')\n    os.chmod('d', 0o500)\n    open('../beside', 'w').write('x')\n    open('/tmp/left', 'w').write('x')\n    return 2\n".replace(
        sandbox.kind === 'bwrap' ? '' : "    open('/tmp/left', 'w').write('x')\n",
        '',
      ),
      "    import os\n    here = os.getcwd()\n    assert os.listdir(here) == []\n    assert os.listdir(os.path.dirname(here)) == [os.path.basename(here)]\n    assert not os.path.exists('/tmp/left')\n    return 1\n",
    ]);
    expect(results.map((r) => r.result)).toEqual(['failed: ', 'passed']);
  });

  it('what a sample does to the modules the worker preloads, its GC or its builtins stays in that sample', async () => {
    // typing, math, collections... are imported once by the worker and every sample is forked
    // with them: a sample that rewrites them (or the GC, or builtins) changes only its own copy.
    const results = await runAll([
      '    import typing, math, collections, builtins, gc\n    typing.List = None\n    math.sqrt = lambda x: 1\n    collections.Counter = None\n    builtins.abs = lambda x: 1\n    gc.unfreeze()\n    gc.disable()\n    return 2\n',
      '    import typing, math, collections, gc\n    assert typing.List is not None and math.sqrt(16) == 4.0\n    assert collections.Counter("aab")["a"] == 2 and abs(-3) == 3\n    assert gc.isenabled() and gc.get_freeze_count() > 0\n    return 1\n',
    ]);
    expect(results.map((r) => r.result)).toEqual(['failed: ', 'passed']);
  });
});

describe.skipIf(sandbox.kind !== 'bwrap')('the Python sample folder has a size limit (bwrap)', () => {
  it('a sample that writes 10 files of 8 MiB under a 32 MiB limit is stopped at the limit', async () => {
    // Passes (returns 1) only when the files together stayed within 32 MiB.
    const writer =
      "    import os\n    total = 0\n    for i in range(10):\n        try:\n            with open('f%d' % i, 'wb') as out:\n                out.write(b'x' * (8 << 20))\n            total += 8 << 20\n        except OSError:\n            break\n    return 1 if total <= 32 << 20 else 0\n";
    const [result, after] = await findExecutor('python')!.runBatch(
      [writer, '    return 1\n'].map((completion, index) => ({
        problem,
        sample: { task_id: problem.task_id, completion, index },
      })),
      {
        timeoutSec: 20,
        workers: 1,
        sandbox: { ...DEFAULT_SANDBOX, memoryBytes: 512 * 1024 * 1024, diskBytes: 32 * 1024 * 1024 },
      },
    );
    expect(result?.result).toBe('passed');
    expect(after?.result).toBe('passed');
  });
});
