/**
 * The fast path of JavaScript samples (src/functional/executors/js-isolates.ts): many samples per
 * sandboxed worker, each in a fresh V8 context; a pass there stands, anything else runs again as
 * `node main.js`. These samples are hostile: each checks that the fast path never gives a pass
 * that node would not, that a sample cannot reach another sample's verdict, and that what the
 * fast path lacks sends the sample to the reference path (the verdicts then are node's).
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ISOLATE_WORKER,
  isolatedVmDir,
  isolateSetup,
  isolateStats,
} from '../../src/functional/executors/js-isolates.ts';
import { detectSandbox } from '../../src/functional/sandbox.ts';
import type { ExecutionResult } from '../../src/functional/types.ts';
import { JS_PROBLEM, runSamples } from '../helpers/warm-samples.ts';

const right = '  return 1;\n}\n';
const wrong = '  return 0;\n}\n';
const sandbox = detectSandbox('auto');
const setup = isolateSetup();

function runAll(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  return runSamples(JS_PROBLEM, completions, timeoutSec, 1024 * 1024 * 1024);
}

/** How many samples ended each way on the fast path while `fn` ran. */
async function counting<T>(fn: () => Promise<T>): Promise<{ value: T; stats: Record<string, number> }> {
  const before = { ...isolateStats };
  const value = await fn();
  const stats: Record<string, number> = {};
  for (const [key, count] of Object.entries(isolateStats)) {
    const delta = count - (before[key as keyof typeof before] ?? 0);
    if (delta) stats[key] = delta;
  }
  return { value, stats };
}

/** What a verdict is made of. */
const verdict = (r: ExecutionResult | undefined) => ({ passed: r?.passed, kind: r?.kind });

/** The same completions on the reference path only (`BERTH_JS_ISOLATES=0`). */
async function reference(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  process.env.BERTH_JS_ISOLATES = '0';
  try {
    return await runAll(completions, timeoutSec);
  } finally {
    delete process.env.BERTH_JS_ISOLATES;
  }
}

describe.skipIf(sandbox.kind !== 'bwrap' || setup === undefined)(
  'JavaScript samples on the fast path (isolated-vm in the warm sandbox)',
  () => {
    afterEach(() => {
      delete process.env.BERTH_JS_ISOLATES;
    });

    it('a right answer passes there; a wrong one, console and node globals go to node, same verdicts', async () => {
      const completions = [
        right,
        wrong,
        "  console.log('hello');\n  return 1;\n}\n",
        "  return typeof process === 'undefined' ? 1 : 0;\n}\n",
        "  try { require('fs'); } catch { return 1; }\n  return 1;\n}\n",
        '  try { return process.version ? 1 : 0; } catch { return 1; }\n}\n',
      ];
      const { value: results, stats } = await counting(() => runAll(completions));
      const expected = await reference(completions);
      expect(results.map(verdict)).toEqual(expected.map(verdict));
      expect(results.map((r) => r.passed)).toEqual([true, false, true, false, true, true]);
      expect(results[2]?.output).toBe('hello\n');
      expect(results[1]?.output).toContain('f() is not 1');
      expect(stats).toEqual({ passed: 1, threw: 1, lacks: 4 });
    }, 120_000);

    it('one sample poisoning lodash, prototypes or globals cannot pass the next', async () => {
      const poison = [
        "  const _ = require('lodash');",
        '  _.isEqual = () => true;',
        '  _.mixin({ isEqual: () => true });',
        '  Object.prototype.poisoned = true;',
        '  Array.prototype.includes = () => true;',
        '  globalThis.f = () => 1;',
        '  Error.prepareStackTrace = () => "forged";',
        '  new FinalizationRegistry(() => { throw 1; }).register({}, 0);',
        '  return 0;\n}\n',
      ].join('\n');
      const completions = [poison, wrong, right, wrong];
      const { value: results, stats } = await counting(() => runAll(completions));
      // Whatever the poison's own verdict (node's: it breaks lodash for itself), the next ones keep theirs.
      expect(results.map(verdict)).toEqual((await reference(completions)).map(verdict));
      expect(results.slice(1).map((r) => r.passed)).toEqual([false, true, false]);
      expect(results[1]?.kind).toBe('test_failure');
      expect(stats.passed).toBe(1);
    }, 120_000);

    it('escapes through constructors, errors, dynamic import or stack frames reach nothing of the worker', async () => {
      // Each passes only where it reaches node's `process` (so under node, the reference, it passes).
      const escapes = [
        "  const g = this.constructor.constructor('return this')();\n  return g.process && g.process.pid ? 1 : 0;\n}\n",
        "  try { null.x; } catch (e) { return e.constructor.constructor('return process')().pid ? 1 : 0; }\n}\n",
        '  let found = 0;\n  Error.prepareStackTrace = (e, frames) => frames.map((s) => s.getThis());\n  const frames = new Error().stack;\n  for (const t of frames) if (t && t.process) found = 1;\n  return found;\n}\n',
        "  import('fs').then((fs) => { globalThis.leak = fs; });\n  return 1;\n}\n",
      ];
      const { value: results, stats } = await counting(() => runAll(escapes));
      const expected = await reference(escapes);
      expect(results.map(verdict)).toEqual(expected.map(verdict));
      // None of them passed on the fast path: each touched a trap or threw.
      expect(stats.passed ?? 0).toBe(0);
    }, 120_000);

    it('a pass there needs what node needs: no wrapper break-out, no unhandled rejection, a stack node has', async () => {
      const completions = [
        // Closes node's module wrapper: a syntax error under node, and with the Function constructor too.
        '  return 1;\n}); (function () {\n',
        // Right answer, then a rejected promise nobody handles: node exits 1.
        "  Promise.reject(new Error('late'));\n  return 1;\n}\n",
        // Rejected inside a microtask after the tests ran.
        "  Promise.resolve().then(() => { throw new Error('later'); });\n  return 1;\n}\n",
        // Recursion deeper than the fast path's stack (256 kB) but within node's (984 kB): passes under node.
        '  let d = 0;\n  function r(n) { d++; return n === 0 ? 0 : r(n - 1) + 0; }\n  r(6000);\n  return d > 0 ? 1 : 0;\n}\n',
        // Throwing things that are not errors.
        '  throw null;\n}\n',
        '  throw { get message() { for (;;); }, toString() { for (;;); } };\n}\n',
        right,
      ];
      const { value: results, stats } = await counting(() => runAll(completions));
      const expected = await reference(completions);
      expect(results.map(verdict)).toEqual(expected.map(verdict));
      expect(results.map((r) => r.passed)).toEqual([false, false, false, true, false, false, true]);
      expect(stats.passed).toBe(1);
    }, 120_000);

    it('an endless loop, an endless microtask chain, a huge allocation and console spam end and rerun', async () => {
      const completions = [
        '  for (;;) {}\n}\n',
        '  const spin = () => Promise.resolve().then(spin);\n  spin();\n  return 1;\n}\n',
        '  const a = [];\n  for (;;) a.push(new Float64Array(1e7));\n}\n',
        "  for (;;) console.log('spam');\n}\n",
        right,
      ];
      const { value: results, stats } = await counting(() => runAll(completions, 2));
      expect(results.map(verdict)).toEqual((await reference(completions, 2)).map(verdict));
      expect(results.map((r) => r.kind).slice(0, 2)).toEqual(['timeout', 'timeout']);
      expect(results[4]?.passed).toBe(true);
      // Only the right answer passed there; the rest reran (the allocation throws once the isolate's heap is full).
      expect(stats.passed).toBe(1);
      expect(stats.lacks).toBe(1);
    }, 180_000);

    it('--reference (and BERTH_JS_ISOLATES=0) keep every sample on the reference path', async () => {
      const { stats } = await counting(() => reference([right, wrong]));
      expect(stats).toEqual({});
    }, 120_000);
  },
);

/** The worker alone (no sandbox), with the sandbox's `node`: answers for programs sent to it. */
function askWorker(programs: string[], timeoutMs = 1000): Promise<{ ready: boolean; outcomes: string[] }> {
  const dir = isolatedVmDir() as string;
  const child = spawn('node', ['--no-node-snapshot', '--stack-size=256', '-e', ISOLATE_WORKER], {
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      BERTH_IVM: dir,
      BERTH_LODASH: setup?.lodashFile ?? '',
      BERTH_SAMPLE_FILE: '/sample/main.js',
      BERTH_NODE_GLOBALS: JSON.stringify(['process', 'console', 'setTimeout', 'global']),
      BERTH_SAMPLES_PER_ISOLATE: '200',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (data: Buffer) => {
    out += data.toString();
  });
  child.stdin.end(
    `${programs
      .map((program, id) => JSON.stringify({ id, program, timeout_ms: timeoutMs, memory_mb: 64 }))
      .join('\n')}\n`,
  );
  return new Promise((resolve) => {
    child.on('close', () => {
      const lines = out.split('\n').filter(Boolean);
      resolve({
        ready: lines[0] === '{"ready": true}',
        outcomes: lines.slice(1).map((line) => JSON.parse(line).outcome),
      });
    });
  });
}

describe.skipIf(setup === undefined)('the isolate worker', () => {
  let works = false;
  beforeAll(async () => {
    works = (await askWorker([])).ready;
  }, 60_000);

  it('says `passed` only for a program that ended; its traps mark every touch of node', async (ctx) => {
    if (!works) ctx.skip('isolated-vm does not load in the sandbox node (built for another Node ABI)');
    const { outcomes } = await askWorker([
      "const _ = require('lodash'); if (!_.isEqual([1, { a: new Map([[1, 2]]) }], [1, { a: new Map([[1, 2]]) }])) throw 1;",
      "const _ = require('lodash'); if (_.isEqual(new Date(1), new Date(2)) || !_.isEqual(new Uint8Array([1]), new Uint8Array([1]))) throw 1;",
      'try { typeof process; } catch {}',
      "try { require('lodash/isEqual'); } catch {}",
      'try { require.cache; } catch {}',
      'throw 1;',
      'for (;;) {}',
      'const a = []; for (;;) a.push(new Float64Array(1e7));',
      "Promise.reject(new Error('x'));",
      'let d = 0; function f() { d++; f(); } f();',
      "exports.x = 1; module.exports = { y: 2 }; if (this !== exports || __filename !== '/sample/main.js') throw 1;",
    ]);
    expect(outcomes).toEqual([
      'passed',
      'passed',
      'lacks',
      'lacks',
      'lacks',
      'threw',
      'timeout',
      'threw',
      'threw',
      'threw',
      'passed',
    ]);
  }, 120_000);
});
