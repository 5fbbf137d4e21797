/**
 * berth reads a warm worker's answers as untrusted (breaker round 4, finding 5): a line of the wrong
 * form, an answer to no pending request or a line past the bound makes that sample a sandbox error
 * and the worker is replaced; the batch goes on. The worker here is a real process, a stand-in
 * interpreter that speaks the protocol wrongly on purpose, run through the real Python executor.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonExecutor } from '../../src/functional/executors/python.ts';
import { WarmWorker } from '../../src/functional/executors/warm-worker.ts';
import { DEFAULT_SANDBOX } from '../../src/functional/sandbox.ts';
import type { ExecutionResult, RunBatchOptions } from '../../src/functional/types.ts';
import { PY_PROBLEM } from '../helpers/warm-samples.ts';

/** Each stand-in answers every request (one JSON line on stdin) with its `answer(id)` line. */
const STANDINS: Record<string, string> = {
  'wrong-type': 'json.dumps({"id": req["id"], "result": 5, "kind": "", "elapsed": 0})',
  'wrong-form': 'json.dumps({"id": req["id"], "result": "yes", "kind": "", "elapsed": 0})',
  'unknown-id': 'json.dumps({"id": req["id"] + 1000, "result": "passed", "kind": "", "elapsed": 0})',
  'not-json': '"passed"[:-1] + "{"',
  'not-object': 'json.dumps([req["id"], "passed"])',
  endless: '"x" * (3 * 1024 * 1024)',
};

let dir: string;

function standin(name: string): string {
  return join(dir, `${name}.py`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'evalsafe-protocol-'));
  await chmod(dir, 0o755);
  for (const [name, answer] of Object.entries(STANDINS)) {
    const newline = name === 'endless' ? '' : ' + "\\n"';
    const script = [
      '#!/usr/bin/python3',
      'import json, sys, time',
      'sys.stdout.write(json.dumps({"ready": True}) + "\\n"); sys.stdout.flush()',
      'for line in sys.stdin:',
      '    req = json.loads(line)',
      `    sys.stdout.write(${answer}${newline}); sys.stdout.flush()`,
      'time.sleep(30)',
      '',
    ].join('\n');
    await writeFile(standin(name), script, { mode: 0o755 });
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const options: RunBatchOptions = {
  timeoutSec: 5,
  workers: 1,
  sandbox: { ...DEFAULT_SANDBOX, kind: 'none', maxOutputBytes: 1024 },
};

const problem = PY_PROBLEM;

describe('answers of a warm worker are checked, never trusted', () => {
  for (const name of Object.keys(STANDINS)) {
    it(`${name}: the sample is a sandbox error and the worker is killed`, async () => {
      const worker = await WarmWorker.start(0, options, { python: standin(name) });
      try {
        const answer = await worker.run('pass', 5, 256 * 1024 * 1024);
        expect(answer).toBeUndefined();
        expect(worker.fault).toMatch(/^the sample worker sent an answer/);
        expect(worker.alive).toBe(false);
      } finally {
        await worker.stop();
      }
    });
  }

  it('the Python executor goes on: each sample a sandbox error, no exception, every worker replaced', async () => {
    const saved = process.env.BERTH_PYTHON;
    process.env.BERTH_PYTHON = standin('wrong-type');
    let results: ExecutionResult[];
    try {
      results = await pythonExecutor.runBatch(
        [0, 1, 2].map((index) => ({
          problem,
          sample: { task_id: problem.task_id, completion: '    return 1\n', index },
        })),
        options,
      );
    } finally {
      if (saved === undefined) delete process.env.BERTH_PYTHON;
      else process.env.BERTH_PYTHON = saved;
    }
    expect(results.map((r) => [r.passed, r.kind, r.result])).toEqual(
      Array(3).fill([
        false,
        'error_of_run',
        'failed: sandbox error: the sample worker sent an answer of the wrong form',
      ]),
    );
  });
});
