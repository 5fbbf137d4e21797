/**
 * Hostile samples: each must fail with the right reason and leave the machine
 * as it was (no process of the sandbox users left, no folder left, no file
 * outside the sample folder touched, no connection made).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExecutor } from '../../src/functional/executors/index.ts';
import { DEFAULT_SANDBOX, detectSandbox, sampleRoot } from '../../src/functional/sandbox.ts';
import type { ExecutionResult, Problem, SandboxOptions } from '../../src/functional/types.ts';
import { slotIdentity } from '../../src/sandbox/identity.ts';

function problem(language: string, prompt: string, test: string): Problem {
  return {
    task_id: `T/${language}`,
    prompt,
    entry_point: 'f',
    test,
    language,
    canonical_solution: '',
    has_canonical_solution: false,
    raw: {},
  };
}

const pythonProblem = problem(
  'python',
  'def f():\n',
  '\ndef check(candidate):\n    assert candidate() == 1\n',
);
const jsProblem = problem(
  'javascript',
  'function f() {\n',
  '\nif (f() !== 1) { throw new Error("wrong"); }\n',
);
const cppProblem = problem(
  'cpp',
  '#include <unistd.h>\nint f() {\n',
  '\nint main() { return f() == 1 ? 0 : 1; }\n',
);

async function run(
  p: Problem,
  completion: string,
  timeoutSec = 3,
  kind: SandboxOptions['kind'] = 'auto',
): Promise<ExecutionResult> {
  const executor = findExecutor(p.language);
  if (!executor) throw new Error(`no executor for ${p.language}`);
  const [result] = await executor.runBatch(
    [{ problem: p, sample: { task_id: p.task_id, completion, index: 0 } }],
    {
      timeoutSec,
      workers: 1,
      sandbox: { ...DEFAULT_SANDBOX, kind, memoryBytes: 512 * 1024 * 1024 },
    },
  );
  return result as ExecutionResult;
}

/**
 * Processes left by the sandbox users of slots 0 and 1 (not checked when berth is not root).
 * Killed sandboxes are re-parented to pid 1 and reaped by it a moment later: wait up to 5 s.
 */
async function leftoverProcesses(): Promise<string> {
  const identity = slotIdentity(0);
  if (!identity) return '';
  let text = '';
  for (let attempt = 0; attempt < 50; attempt++) {
    const out = spawnSync(
      'ps',
      ['-o', 'pid=,user=,stat=,args=', '-u', `${identity.uid},${identity.uid + 1}`],
      { encoding: 'utf8' },
    );
    text = out.stdout.trim();
    if (text === '') return '';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return text;
}

function leftoverFolders(): string[] {
  const root = sampleRoot();
  return existsSync(root) ? readdirSync(root) : [];
}

const sandbox = detectSandbox('auto');

describe.skipIf(sandbox.kind === 'none')('hostile samples are contained', () => {
  const before = new Set(leftoverFolders());
  let server: Server;
  let port = 0;
  let connections = 0;
  let victimDir: string;
  let victim: string;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    // A file any user could delete without isolation (world-writable folder, like /tmp).
    victimDir = mkdtempSync(join(tmpdir(), 'berth-victim-'));
    chmodSync(victimDir, 0o777);
    victim = join(victimDir, 'precious.txt');
    writeFileSync(victim, 'keep me');
    chmodSync(victim, 0o666);
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(victimDir, { recursive: true, force: true });
  });

  it('a Python loop that never ends times out', async () => {
    const result = await run(pythonProblem, '    while True:\n        pass\n', 2);
    expect(result).toMatchObject({ passed: false, result: 'timed out', kind: 'timeout' });
    expect(result.time_elapsed).toBeLessThan(5);
  });

  it('a JavaScript loop that never ends is killed at the timeout', async () => {
    const result = await run(jsProblem, '  while (true) {}\n}\n', 2);
    expect(result).toMatchObject({ passed: false, result: 'timed out', kind: 'timeout' });
    expect(result.time_elapsed).toBeLessThan(6);
  });

  it('allocating 10 GB in Python hits the memory limit', async () => {
    const result = await run(pythonProblem, '    data = bytearray(10 * 1024 ** 3)\n    return 1\n');
    expect(result.passed).toBe(false);
    expect(result.kind).toBe('crash');
    expect(result.result).toContain('MemoryError');
  });

  it('allocating 10 GB in C++ hits the memory limit', async () => {
    const completion =
      '  char *p = new char[10L * 1024 * 1024 * 1024];\n  for (long i = 0; i < 10L * 1024 * 1024 * 1024; i += 4096) p[i] = 1;\n  return 1;\n}\n';
    const result = await run(cppProblem, completion, 10);
    expect(result.passed).toBe(false);
    expect(result.kind).toBe('crash');
  });

  it('a Python fork bomb is stopped by the process limit', async () => {
    const result = await run(pythonProblem, '    import os\n    while True:\n        os.fork()\n', 3);
    expect(result.passed).toBe(false);
    expect(['crash', 'timeout']).toContain(result.kind);
    expect(await leftoverProcesses()).toBe('');
  });

  it('a C fork bomb is killed with its whole process group', async () => {
    const result = await run(cppProblem, '  while (true) fork();\n  return 1;\n}\n', 2);
    expect(result.passed).toBe(false);
    expect(result.kind).toBe('timeout');
    expect(await leftoverProcesses()).toBe('');
  });

  it('a socket to a local server fails: no network', async () => {
    const completion = `    import socket\n    s = socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n    return 1\n`;
    const result = await run(pythonProblem, completion);
    expect(result.passed).toBe(false);
    expect(result.kind).toBe('test_failure');
    expect(result.result).toMatch(/refused|unreachable|Network/i);
    const js = await run(
      jsProblem,
      `  require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (e) => { console.error(e.message); process.exit(3); });\n  return 0;\n}\n`,
    );
    expect(js.passed).toBe(false);
    expect(connections).toBe(0);
  });

  it('deleting a file outside the sample folder fails and the file stays', async () => {
    const completion = `    import os, shutil\n    os.remove(${JSON.stringify(victim)})\n    return 1\n`;
    const result = await run(pythonProblem, completion);
    expect(result.passed).toBe(false);
    expect(existsSync(victim)).toBe(true);
    const js = await run(
      jsProblem,
      `  require('fs').rmSync(${JSON.stringify(victimDir)}, { recursive: true, force: true });\n  return 1;\n}\n`,
    );
    // With bubblewrap the folder is not even visible (rm of a missing path "succeeds"); it must survive either way.
    expect(js.sandbox).toBe(sandbox.kind);
    expect(existsSync(victim)).toBe(true);
  });

  it('leaves no sample folder and no process behind', async () => {
    const after = leftoverFolders().filter((name) => !before.has(name));
    expect(after).toEqual([]);
    expect(await leftoverProcesses()).toBe('');
  });
});

const dockerImage =
  spawnSync('docker', ['image', 'inspect', 'berth-base:bookworm'], { stdio: 'ignore' }).status === 0;
const requireDocker = process.env.BERTH_REQUIRE_DOCKER === '1';

describe.skipIf(!dockerImage && !requireDocker)(
  'hostile samples in --env docker (berth-base:bookworm)',
  () => {
    it('loop, 10 GB, fork bomb and socket each fail with their reason; no container is left', async () => {
      const loop = await run(pythonProblem, '    while True:\n        pass\n', 2, 'docker');
      expect(loop).toMatchObject({ passed: false, kind: 'timeout', sandbox: 'docker' });
      const memory = await run(
        pythonProblem,
        '    data = bytearray(10 * 1024 ** 3)\n    return 1\n',
        3,
        'docker',
      );
      expect(memory).toMatchObject({ passed: false, kind: 'crash' });
      const bomb = await run(
        pythonProblem,
        '    import os\n    while True:\n        os.fork()\n',
        3,
        'docker',
      );
      expect(bomb.passed).toBe(false);
      expect(['crash', 'timeout']).toContain(bomb.kind);
      const socket = await run(
        pythonProblem,
        '    import socket\n    socket.create_connection(("127.0.0.1", 9), timeout=2)\n    return 1\n',
        3,
        'docker',
      );
      expect(socket).toMatchObject({ passed: false, kind: 'test_failure' });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const left = spawnSync('docker', ['ps', '-aq', '--filter', 'label=berth.functional'], {
        encoding: 'utf8',
      }).stdout.trim();
      expect(left).toBe('');
    });
  },
);
