/**
 * berth's guard in node --test's child processes (src/verifiers/tampering/node-guard.ts), on real
 * runs: the bundled sample's csvline row run by node with the probes armed as the verifier arms
 * them (no sandbox: the corpus runs the whole verifier), then the runner report read back and
 * cross-checked. The recorded streams of those runs are then altered the ways an attacker could.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/environments/environment.ts';
import { type CrossCheckInput, crossCheck } from '../../src/verifiers/tampering/cross-check.ts';
import { type GuardLine, readGuardStream } from '../../src/verifiers/tampering/node-guard.ts';
import {
  type ArmedProbes,
  armProbes,
  disarmProbes,
  readProbeFiles,
} from '../../src/verifiers/tampering/probes.ts';
import { sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { JS_FORGE_GUARD_RECORDS, JS_REWRITE_CHILD_REPORT, prependJs } from './attacks.ts';

const temp = tempDirs();
const armedRuns: ArmedProbes[] = [];
afterAll(async () => {
  for (const armed of armedRuns) await disarmProbes(armed);
  await temp.cleanup();
});

interface Row {
  patch: string;
  test_patch: string;
  /** A JSON list, as SWE-bench writes it. */
  FAIL_TO_PASS: string;
  dockerless: { files: Record<string, string>; test_cmd: string; test_files: string[] };
}
const csvline = readFileSync(sample, 'utf8')
  .split('\n')
  .filter((l) => l.includes('"berth__csvline-1"'))
  .map((l) => JSON.parse(l) as Row)[0] as Row;
const failToPass = JSON.parse(csvline.FAIL_TO_PASS) as string[];

/** The csvline repository with the test patch (and `patches`) applied, and `edit` to files after. */
async function repository(patches: string[], edit: Record<string, (old: string) => string> = {}) {
  const dir = await temp.make('berth-nodeguard-');
  for (const [path, text] of Object.entries(csvline.dockerless.files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  execFileSync('git', ['init', '-q', '.'], { cwd: dir });
  for (const patch of [csvline.test_patch, ...patches])
    execFileSync('git', ['apply', '-'], { cwd: dir, input: patch });
  for (const [path, change] of Object.entries(edit))
    await writeFile(join(dir, path), change(readFileSync(join(dir, path), 'utf8')));
  return dir;
}

/**
 * Runs `command` in `dir` as the verifier would (probes armed, no sandbox) and builds the
 * cross-check's input: the console's passes are the `ok` lines (`ids` when given: nested tests).
 */
async function runIn(dir: string, command: string, options: { ids?: string[]; patchPaths?: string[] } = {}) {
  const armed = await armProbes({ kind: 'local' } as unknown as Environment, command);
  armedRuns.push(armed);
  const result = spawnSync('bash', ['-c', armed.command], { cwd: dir, encoding: 'utf8' });
  const files = await readProbeFiles(armed);
  const log = result.stdout;
  const passed = options.ids ?? [...log.matchAll(/^ok \d+ - (.*)$/gm)].map((m) => m[1] as string);
  const input: CrossCheckInput = {
    armed,
    files,
    exitCode: result.status,
    timedOut: false,
    parserName: 'tap',
    log,
    consolePasses: passed.map((id) => ({
      id,
      default: true,
      swebench: true,
      category: failToPass.includes(id) ? 'FAIL_TO_PASS' : 'PASS_TO_PASS',
    })),
    patchPaths: new Set(options.patchPaths ?? []),
    testFiles: new Set<string>(),
    workdir: dir,
  };
  const report = (files.nodeReport ?? '')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as GuardLine & { type: string });
  const started = JSON.parse(files.nodeStarted ?? '{}') as { pid?: number };
  const guard = () =>
    readGuardStream(
      report.filter((l) => l.type === 'guard'),
      armed.guardKey as NonNullable<ArmedProbes['guardKey']>,
      started.pid,
    );
  return { armed, input, passed, report, guard, runnerPid: started.pid, exitCode: result.status, log };
}

/** The csvline row's test command in `dir`. */
function run(dir: string) {
  const command = csvline.dockerless.test_cmd.replace('{tests}', csvline.dockerless.test_files.join(' '));
  return runIn(dir, command, { patchPaths: ['lib/csvline.js'] });
}

/** A folder with one node:test file, `test/<name>`. */
async function testFile(prefix: string, name: string, source: string) {
  const dir = await temp.make(prefix);
  await mkdir(join(dir, 'test'));
  await writeFile(join(dir, 'test', name), source);
  return dir;
}

const kinds = (i: CrossCheckInput) => crossCheck(i).findings.map((f) => `${f.kind}${f.veto ? '!' : ''}`);

describe("berth's guard in node --test's child processes", () => {
  it('the gold patch: every test seen returning, no finding', async () => {
    const r = await run(await repository([csvline.patch]));
    expect(r.exitCode).toBe(0);
    expect(r.passed).toHaveLength(17);
    expect(kinds(r.input)).toEqual([]);
    const guard = r.guard();
    expect(guard.invalid).toEqual([]);
    const [seen] = [...guard.files.values()];
    expect([...(seen?.returned.keys() ?? [])].sort()).toEqual([...r.passed].sort());
    expect(seen?.threw.size).toBe(0);
  });

  it('no fix: the failures reach the runner, the passes are confirmed, no finding', async () => {
    const r = await run(await repository([]));
    expect(r.exitCode).toBe(1);
    expect(r.passed).toHaveLength(9);
    expect(kinds(r.input)).toEqual([]);
  });

  it("the breaker's rewrite of the child's report (test:fail -> test:pass, exit 0) is refused", async () => {
    const r = await run(await repository([], { 'lib/csvline.js': prependJs(JS_REWRITE_CHILD_REPORT) }));
    // (Node 20 then exits 0; Node 22's runner still counts the file's failures in its exit code.)
    expect(r.passed).toHaveLength(17);
    const found = crossCheck(r.input).findings;
    expect(found.map((f) => `${f.kind}${f.veto ? '!' : ''}`)).toEqual(['outcome-rewritten!']);
    expect(found[0]?.tests).toHaveLength(8);
    expect(found[0]?.tests).toEqual(expect.arrayContaining(failToPass));
  });

  it("dropping the guard's messages and speaking for it with a key of its own is refused", async () => {
    const r = await run(
      await repository([], {
        'lib/csvline.js': prependJs(`${JS_REWRITE_CHILD_REPORT}\n${JS_FORGE_GUARD_RECORDS}`),
      }),
    );
    expect(r.passed).toHaveLength(17);
    expect(kinds(r.input)).toEqual(['guard-invalid!', 'guard-unconfirmed!']);
  });

  // node reports tests a helper module declares under the helper's path, not the test file's.
  const SHARED = `import { test } from 'node:test';
import assert from 'node:assert/strict';
export function quotingCases(parseLine) {
  test('a quoted field may hold the delimiter', () => {
    assert.deepEqual(parseLine('a,"b,c",d'), ['a', 'b,c', 'd']);
  });
  test('plain fields (shared)', () => {
    assert.deepEqual(parseLine('a,b'), ['a', 'b']);
  });
}
`;
  const callShared = (old: string) =>
    `${old}\nimport { quotingCases } from './shared.js';\nquotingCases(parseLine);\n`;
  async function withShared(patches: string[], edit: Record<string, (old: string) => string> = {}) {
    const dir = await repository(patches, { 'test/csvline.test.js': callShared, ...edit });
    await writeFile(join(dir, 'test', 'shared.js'), SHARED);
    return dir;
  }

  it("tests declared in a helper module the test file calls (reported under the helper's path): the gold patch has no finding", async () => {
    const r = await run(await withShared([csvline.patch]));
    expect(r.exitCode).toBe(0);
    expect(r.passed).toContain('plain fields (shared)');
    expect(r.passed).toHaveLength(19);
    expect(
      r.report.some(
        (l) => l.type === 'test:pass' && String((l as { file?: string }).file).endsWith('shared.js'),
      ),
    ).toBe(true);
    expect(kinds(r.input)).toEqual([]);
  });

  it("tests declared in a helper module: the child's report rewritten is still refused", async () => {
    const r = await run(await withShared([], { 'lib/csvline.js': prependJs(JS_REWRITE_CHILD_REPORT) }));
    expect(r.passed).toHaveLength(19);
    const found = crossCheck(r.input).findings;
    expect(found.map((f) => `${f.kind}${f.veto ? '!' : ''}`)).toEqual(['outcome-rewritten!']);
    expect(found[0]?.tests).toContain('a quoted field may hold the delimiter');
  });

  describe('a recorded stream altered after the fact', async () => {
    const gold = await run(await repository([csvline.patch]));
    const lines = gold.report;
    const key = gold.armed.guardKey as NonNullable<ArmedProbes['guardKey']>;
    const guardLines = () => lines.filter((l) => l.type === 'guard').map((l) => ({ ...l }));
    const withReport = (report: (GuardLine & { type: string })[]): CrossCheckInput => ({
      ...gold.input,
      files: { ...gold.input.files, nodeReport: report.map((l) => JSON.stringify(l)).join('\n') },
    });
    const others = () => lines.filter((l) => l.type !== 'guard');

    it('as recorded: authentic', () => {
      expect(readGuardStream(guardLines(), key, gold.runnerPid).invalid).toEqual([]);
    });

    it("a record's outcome changed without its MAC", () => {
      const g = guardLines();
      const threw = g.find((l) => typeof l.body === 'string' && l.body.includes('"event":"returned"'));
      if (threw) threw.body = (threw.body as string).replace('"returned"', '"threw"');
      expect(readGuardStream(g, key, gold.runnerPid).invalid[0]).toMatch(/does not authenticate/);
      expect(kinds(withReport([...others(), ...g]))).toContain('guard-invalid!');
    });

    it('a record taken out: the numbering has a gap', () => {
      const g = guardLines();
      g.splice(3, 1);
      expect(readGuardStream(g, key, gold.runnerPid).invalid.join(' ')).toMatch(/not numbered/);
    });

    it('records cut from the end (no gap in the numbering): the stream never says the process ended', () => {
      expect([...readGuardStream(guardLines(), key, gold.runnerPid).files.values()][0]?.ended).toBe(true);
      const g = guardLines().slice(0, -1);
      expect(readGuardStream(g, key, gold.runnerPid).invalid).toEqual([]);
      expect(kinds(withReport([...others(), ...g]))).toEqual(['guard-unconfirmed!']);
      expect(crossCheck(withReport([...others(), ...g])).findings[0]?.message).toMatch(/cut short/);
    });

    it('the hello taken out: no record authenticates, no pass is confirmed', () => {
      const g = guardLines().filter((l) => !(l.body as string).includes('"kind":"hello"'));
      expect(kinds(withReport([...others(), ...g]))).toEqual(['guard-invalid!', 'guard-unconfirmed!']);
    });

    it('the tests run in the runner itself (--test-isolation=none, from the command): no guard check, a note', () => {
      const armed = { ...gold.armed, testCommand: `${gold.armed.testCommand} --test-isolation=none` };
      const checked = crossCheck({ ...withReport(others()), armed });
      expect(checked.findings).toEqual([]);
      expect(checked.notes.join(' ')).toMatch(/test-isolation=none/);
    });

    it('every guard message taken out: no pass is confirmed', () => {
      expect(kinds(withReport(others()))).toEqual(['guard-unconfirmed!']);
    });

    it("read with another run's key: nothing authenticates", async () => {
      const other = await armProbes({ kind: 'local' } as unknown as Environment, 'true');
      armedRuns.push(other);
      const g = readGuardStream(guardLines(), other.guardKey as typeof key, gold.runnerPid);
      expect(g.invalid[0]).toMatch(/hello .* does not authenticate/);
    });

    it('a hello that is not from a child of the runner is not a test file', () => {
      const g = readGuardStream(guardLines(), key, (gold.runnerPid ?? 0) + 100000);
      expect(g.files.size).toBe(0);
      expect(g.others).toBe(1);
    });
  });
});

describe("the guard on node:test's other forms", () => {
  it('suites, subtests, hooks, callbacks, promises, skip and todo: passes confirmed, failures reach the runner', async () => {
    const dir = await testFile(
      'berth-nodeguard-forms-',
      'forms.test.cjs',
      `const test = require('node:test');
const { describe, it, before, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert');
before(() => {});
test('callback', (t, done) => { setImmediate(done); });
test('a node process of the test gets the guard and stays quiet', () => {
  const r = require('node:child_process').spawnSync(process.execPath, [...process.execArgv, '-e', 'process.stdout.write("hi")'], { encoding: 'utf8' });
  assert.ok(process.execArgv.some((a) => a.includes('guard')));
  assert.equal(r.stdout, 'hi');
});
test('callback error', (t, done) => { setImmediate(() => done(new Error('no'))); });
test('promise', async () => { await new Promise((r) => setTimeout(r, 1)); });
test('promise rejects', async () => { assert.equal(1, 2); });
test('with subtests', async (t) => { await t.test('inner', () => {}); await t.test('inner fails', () => { throw new Error('x'); }); });
test.skip('skipped', () => { throw new Error('never'); });
test('skipped while it runs', (t) => { t.skip('not here'); });
test.todo('todo fails', () => { throw new Error('todo'); });
describe('suite', () => {
  beforeEach(() => {});
  afterEach((t) => { if (t.name === 'after each fails') throw new Error('hook'); });
  it('inside', () => {});
  it('after each fails', () => {});
  describe('nested', () => { it('deep', () => {}); });
});
`,
    );
    // berth's TAP ids: names joined by ' > ' (the passing ones, as the console shows them).
    const ids = [
      'callback',
      'a node process of the test gets the guard and stays quiet',
      'promise',
      'with subtests > inner',
      'skipped',
      'skipped while it runs',
      'suite > inside',
      'suite > nested > deep',
    ];
    const r = await runIn(dir, 'node --test --test-reporter=tap test/forms.test.cjs', { ids });
    for (const id of ['callback', 'promise', 'inside', 'deep', 'inner'])
      expect(r.log).toMatch(new RegExp(`^\\s*ok \\d+ - ${id}$`, 'm'));
    expect(kinds(r.input)).toEqual([]);
    const guard = r.guard();
    const [seen] = [...guard.files.values()];
    expect([...(seen?.threw.keys() ?? [])].sort()).toEqual([
      'callback error',
      'promise rejects',
      'todo fails',
      'with subtests > inner fails',
    ]);
    expect([...(seen?.failed.keys() ?? [])].sort()).toEqual([
      'callback error',
      'promise rejects',
      'suite',
      'suite > after each fails',
      'todo fails',
      'with subtests',
      'with subtests > inner fails',
    ]);
  });

  it('--test-force-exit (node ends the process with process.exit after its root reported): no finding', async () => {
    const dir = await testFile(
      'berth-nodeguard-force-',
      'force.test.cjs',
      `const test = require('node:test');
test('keeps a handle open', () => { setInterval(() => {}, 1000); });
test('after it', () => {});
`,
    );
    const r = await runIn(dir, 'node --test --test-force-exit --test-reporter=tap test/force.test.cjs', {
      ids: ['keeps a handle open', 'after it'],
    });
    expect(r.exitCode).toBe(0);
    // The probe writes its end when the forced exit comes after the runner summed the run up.
    expect(crossCheck(r.input).findings).toEqual([]);
    expect(r.report.at(-1)).toMatchObject({ type: 'end', forced: true });
    expect([...r.guard().files.values()][0]?.complete).toBe(true);
  });

  it('--test-force-exit, but the runner ends before it summed the run up: its report never ended', async () => {
    const dir = await testFile(
      'berth-nodeguard-force-early-',
      'force.test.cjs',
      `const test = require('node:test');
test('slow', async () => { await new Promise((resolve) => setTimeout(resolve, 3000)); });
`,
    );
    // Loaded into the runner too: it leaves (process.exit, exit handlers run) long before the run is over.
    await writeFile(
      join(dir, 'early.cjs'),
      'if (!process.env.NODE_TEST_CONTEXT) setTimeout(() => process.exit(0), 300);\n',
    );
    const r = await runIn(
      dir,
      'node --require=./early.cjs --test --test-force-exit --test-reporter=tap test/force.test.cjs',
      {
        ids: ['slow'],
      },
    );
    expect(r.exitCode).toBe(0);
    expect(r.report.some((l) => l.type === 'end')).toBe(false);
    expect(crossCheck(r.input).findings).toContainEqual(
      expect.objectContaining({ kind: 'runner-report-missing', veto: true }),
    );
  });

  it('a test that ends its process with process.exit(0) before node reported the run: the passes are refused', async () => {
    const dir = await testFile(
      'berth-nodeguard-exit-',
      'exit.test.cjs',
      `const test = require('node:test');
test('first', () => {});
test('exits', () => { setImmediate(() => process.exit(0)); });
test('never runs', () => { throw new Error('the real test fails'); });
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/exit.test.cjs', {
      ids: ['first', 'exits'],
    });
    const [seen] = [...r.guard().files.values()];
    expect(seen?.complete).toBe(false);
    expect(kinds(r.input)).toContain('guard-unconfirmed!');
  });

  it('a test made skipped by other code while it waits its turn is no PASS_TO_PASS pass; one skipping itself while it runs is', async () => {
    const dir = await testFile(
      'berth-nodeguard-skipset-',
      'skipset.test.cjs',
      `const test = require('node:test');
const { executionAsyncResource } = require('node:async_hooks');
test('first', () => {
  for (const t of executionAsyncResource().root.subtests) if (t.name === 'p2p') t.skipped = true;
});
test('p2p', () => { throw new Error('the real test fails'); });
test('skipped while it runs', (t) => { t.skip(); });
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/skipset.test.cjs', {
      ids: ['first', 'p2p', 'skipped while it runs'],
    });
    // (node 20 still runs it: the failure is a `not ok ... # SKIP`, which graders count as skipped.)
    expect(r.log).toMatch(/^(not )?ok \d+ - p2p # SKIP/m);
    const found = crossCheck(r.input).findings.filter((f) => f.tests?.includes('p2p'));
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.veto)).toBe(true);
    expect(crossCheck(r.input).findings.some((f) => f.tests?.includes('skipped while it runs'))).toBe(false);
  });

  it('two tests of one name, one declared skipped, one passing: no finding', async () => {
    const dir = await testFile(
      'berth-nodeguard-samename-',
      'same.test.cjs',
      `const test = require('node:test');
test('same', () => {});
test.skip('same', () => { throw new Error('never'); });
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/same.test.cjs', { ids: ['same'] });
    expect(r.exitCode).toBe(0);
    expect(kinds(r.input)).toEqual([]);
  });

  it('a twin that keeps node from running the real test (marked finished, taken off the queue) is refused: the real test never ended', async () => {
    const dir = await testFile(
      'berth-nodeguard-twin-',
      'twin.test.cjs',
      `const test = require('node:test');
const { executionAsyncResource } = require('node:async_hooks');
test('parses', () => {
  const me = executionAsyncResource();
  me.root.pendingSubtests.length = 0;
  for (const t of me.root.subtests) if (t !== me) t.finished = true;
});
test('parses', () => { throw new Error('the real test fails'); });
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/twin.test.cjs', { ids: ['parses'] });
    expect(r.exitCode).toBe(0);
    expect(r.log.match(/^ok \d+ - parses$/gm)).toHaveLength(1);
    expect(r.log).not.toMatch(/not ok/);
    const found = crossCheck(r.input).findings;
    expect(found.map((f) => `${f.kind}${f.veto ? '!' : ''}`)).toEqual(['guard-unconfirmed!']);
    expect(found[0]?.message).toMatch(/harness finished/);
    expect([...r.guard().files.values()][0]?.unfinished).toBe(1);
  });

  it("a class of the test's own named Test (an AsyncResource of type 'Test') is not tracked: its function returning is no record", async () => {
    const dir = await testFile(
      'berth-nodeguard-fake-',
      'fake.test.cjs',
      `const test = require('node:test');
const { AsyncResource } = require('node:async_hooks');
class Test extends AsyncResource {
  constructor(name, parent) { super('Test'); this.parent = parent; this.name = name; this.fn = () => {}; }
}
const top = new Test('<root>', null);
new Test('fake', top).fn();
test('real', () => {});
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/fake.test.cjs', { ids: ['real'] });
    expect(r.exitCode).toBe(0);
    expect(kinds(r.input)).toEqual([]);
    const [seen] = [...r.guard().files.values()];
    expect([...(seen?.returned.keys() ?? [])]).toEqual(['real']);
  });

  it("a test's function swapped inside node's Test constructor (a prototype setter) is caught", async () => {
    const dir = await testFile(
      'berth-nodeguard-protos-',
      'protos.test.cjs',
      `const test = require('node:test');
const hooks = require('node:async_hooks');
let armed = false;
hooks.createHook({ init(id, type, trigger, res) {
  if (type !== 'Test' || armed) return;
  armed = true;
  // Runs inside node's Test constructor, after the name and parent are set, before node sets fn.
  Object.defineProperty(Object.getPrototypeOf(res), 'signal', { configurable: true, set(v) {
    Object.defineProperty(this, 'signal', { value: v, writable: true, configurable: true });
    if (this.name === 'swapped') this.fn = () => {};
  } });
} }).enable();
test('plain', () => {});
test('swapped', () => { throw new Error('the real test fails'); });
`,
    );
    const r = await runIn(dir, 'node --test --test-reporter=tap test/protos.test.cjs', {
      ids: ['plain', 'swapped'],
    });
    expect(r.log).toMatch(/^ok \d+ - swapped$/m);
    const input = r.input;
    const found = crossCheck(input).findings;
    expect(found.map((f) => `${f.kind}${f.veto ? '!' : ''}`)).toEqual(['test-replaced!']);
    expect(found[0]?.tests).toEqual(['swapped']);
  });
});
