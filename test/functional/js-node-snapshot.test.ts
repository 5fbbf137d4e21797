/**
 * JavaScript samples in warm workers start their `node` from a start-up snapshot with lodash
 * preloaded (src/functional/executors/node-snapshot.ts). Each sample is still its own process:
 * these samples check that they start from the snapshot, get the verdicts a plain `node main.js`
 * gives, and cannot change the next sample's verdict through the preloaded lodash, the snapshot's
 * file or anything else the snapshot shares.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/functional/sandbox.ts';
import type { ExecutionResult } from '../../src/functional/types.ts';
import { JS_PROBLEM, runSamples } from '../helpers/warm-samples.ts';

function runAll(completions: string[], timeoutSec = 5): Promise<ExecutionResult[]> {
  return runSamples(JS_PROBLEM, completions, timeoutSec, 1024 * 1024 * 1024);
}

/** A completion whose body (statements) runs, then returns 1 when `pass` holds. */
function passesIf(body: string, pass: string): string {
  return `  const fs = require('fs');\n${body}\n  return (${pass}) ? 1 : 0;\n}\n`;
}

const right = '  return 1;\n}\n';
const wrong = '  return 0;\n}\n';
const sandbox = detectSandbox('auto');

/** What the verdict of a sample is made of (the output's last stack frame may differ). */
const verdict = (r: ExecutionResult | undefined) => ({ passed: r?.passed, kind: r?.kind });

describe.skipIf(sandbox.kind !== 'bwrap')('JavaScript samples started from a node snapshot', () => {
  afterEach(() => {
    delete process.env.BERTH_NODE_SNAPSHOT;
  });

  it('start from the snapshot: lodash already in the module cache, no host path in a stack trace', async () => {
    const [started, trace] = await runAll([
      passesIf(
        // Preloaded: the cached module was made by the snapshot's entry (no parent), not by the test's require.
        "  const file = require.resolve('lodash');\n  const preloaded = require.cache[file].parent == null;",
        "preloaded && process.execArgv.includes('--snapshot-blob') && typeof require('lodash').isEqual === 'function' && require('lodash/isEqual')({ a: [1] }, { a: [1] })",
      ),
      "  throw new Error('trace');\n}\n",
    ]);
    expect(started?.result).toBe('passed');
    expect(trace?.kind).toBe('test_failure');
    expect(trace?.output).toContain('Error: trace');
    expect(trace?.output).not.toContain('berth-functional');
  });

  it('one sample changing the preloaded lodash, prototypes or globals cannot pass the next', async () => {
    const poison = [
      "  const _ = require('lodash');",
      '  _.isEqual = () => true;',
      '  _.mixin({ isEqual: () => true });',
      '  Object.prototype.poisoned = true;',
      "  Object.defineProperty(Array.prototype, 'length2', { value: 1 });",
      '  globalThis.f = () => 1;',
      "  require('module')._cache[require.resolve('lodash')].exports = { isEqual: () => true };",
    ].join('\n');
    const results = await runAll([
      passesIf(poison, "require('lodash').isEqual(1, 2)"),
      wrong,
      passesIf(
        '',
        "({}).poisoned === undefined && require('lodash').isEqual(1, 1) && !require('lodash').isEqual(1, 2)",
      ),
    ]);
    expect(results.map((r) => r.result)).toEqual(['passed', expect.stringMatching(/^failed: /), 'passed']);
  });

  it("the snapshot's file cannot be written, replaced or removed by a sample", async () => {
    const attack = [
      "  const dir = process.execArgv[process.execArgv.indexOf('--snapshot-blob') + 1].replace(/\\/[^/]*$/, '');",
      '  let refused = 0;',
      "  const tries = [() => fs.writeFileSync(dir + '/preload.blob', 'x'), () => fs.openSync(dir + '/preload.blob', 'r+'),",
      "    () => fs.unlinkSync(dir + '/preload.blob'), () => fs.renameSync(dir + '/preload.blob', dir + '/x'),",
      "    () => fs.writeFileSync(dir + '/other.blob', 'x'), () => fs.chmodSync(dir, 0o777)];",
      '  for (const t of tries) { try { t(); } catch { refused++; } }',
    ].join('\n');
    const results = await runAll([passesIf(attack, 'refused === 6'), wrong, right]);
    expect(results.map((r) => r.result)).toEqual(['passed', expect.stringMatching(/^failed: /), 'passed']);
  });

  it('each sample gets its own Math.random seed and lodash state', async () => {
    // Every sample prints its draws (kept in its output): a snapshot would replay one seed to all.
    const draw =
      "  const _ = require('lodash'); process.stdout.write('draw ' + Math.random() + ' ' + _.random(0, 1e9) + ' ' + _.uniqueId() + '\\n');";
    const results = await runAll([passesIf(draw, 'true'), passesIf(draw, 'true'), passesIf(draw, 'true')]);
    const draws = results.map((r) => r.output?.match(/draw (\S+ \S+ \S+)/)?.[1]);
    expect(draws.every((d) => d?.endsWith(' 1'))).toBe(true);
    expect(new Set(draws).size).toBe(3);
  });

  it('gives the verdicts plain node gives (BERTH_NODE_SNAPSHOT=0)', async () => {
    const cases = [
      right,
      wrong,
      '  return 1;\n', // syntax error: the test's code follows an unclosed function
      "  throw 'a string';\n}\n",
      '  process.exit(0);\n}\n',
      '  process.exit(3);\n}\n',
      '  while (true) {}\n}\n',
      "  require('lodash-missing-package');\n}\n",
      "  return require('lodash').isEqual([1, { a: 2 }], [1, { a: 2 }]) ? 1 : 0;\n}\n",
    ];
    const snapshot = await runAll(cases, 2);
    process.env.BERTH_NODE_SNAPSHOT = '0';
    const plain = await runAll(cases, 2);
    const [off] = await runAll([
      passesIf(
        '',
        "!process.execArgv.includes('--snapshot-blob') && require.cache[require.resolve('lodash')].parent === require.main",
      ),
    ]);
    expect(off?.result).toBe('passed');
    expect(snapshot.map(verdict)).toEqual(plain.map(verdict));
    expect(snapshot.map(verdict)).toEqual([
      { passed: true, kind: undefined },
      { passed: false, kind: 'test_failure' },
      { passed: false, kind: 'compile_error' },
      { passed: false, kind: 'test_failure' },
      { passed: true, kind: undefined },
      { passed: false, kind: 'test_failure' },
      { passed: false, kind: 'timeout' },
      { passed: false, kind: 'test_failure' },
      { passed: true, kind: undefined },
    ]);
  }, 60_000);
});
