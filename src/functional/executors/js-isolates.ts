/**
 * The fast path of JavaScript samples (MBJSP, issue 18): many samples in one sandboxed `node`
 * worker per slot, each in a fresh V8 context of a V8 isolate of its own kind (the npm package
 * `isolated-vm`), with nothing of node's in it; everything the fast path cannot vouch for runs
 * again on the reference path (a `node main.js` per sample, process.ts). The rule: **a pass on
 * the fast path stands; any other outcome (a throw, a time-out, the memory limit, a syntax error,
 * or a touch of anything node has and the fast path lacks) is run again on the reference path,
 * whose verdict, failure kind, result text and output are the ones berth reports.**
 *
 * What a sample sees (the worker's setup, below, built once per worker into a V8 start-up
 * snapshot of the isolate): the ECMAScript built-ins of node's own V8 (the worker is the
 * sandbox's `node`), a `require` that returns lodash (the very file a sample's `node` would
 * load, evaluated in the sample's context as node's CommonJS loader does, with `util.types`
 * for lodash's internal-slot checks given by equivalent built-in checks) and nothing else, and
 * `module`, `exports`, `__filename` and `__dirname` as node's module wrapper gives them (the
 * program is compiled with the `Function` constructor, whose body is parsed on its own: a
 * completion cannot close the wrapper early). Reading or writing one of node's globals
 * (`process`, `Buffer`, `console`, timers, `global`... and `typeof` of them), `require` of any
 * other name, or `require.cache`-like fields calls back into the worker, which marks the sample
 * `lacks`: it goes to the reference path whatever it did next (a `try`/`catch` cannot hide it).
 *
 * Why a pass here implies a pass of `node main.js` (the reference's verdict): a program that
 * touched none of the traps ran only ECMAScript built-ins (the same V8) and lodash (the same
 * source, the same loader arguments), so it computes what it computes under node; it ended
 * without throwing, within half the sample's time limit, with a stack of at most 256 kB
 * (`--stack-size=256`, node's default is 984 kB: a deeper recursion throws here and reruns),
 * a heap within the isolate's limit (a quarter of the sample's memory limit, at most 512 MiB),
 * and with no promise rejected and left unhandled after its microtasks ran (isolated-vm's task
 * epilogue rethrows one; node exits 1 on it). A sample that inspects its environment without
 * touching a trap (a property descriptor of `globalThis`, an error's stack text) can tell the
 * two apart and behave differently: it could pass here and fail under node. That gives it
 * nothing it lacks under node, where `process.exit(0)` before the tests, or replacing
 * `_.isEqual`, passes any sample too; what the fast path must not do, and does not, is let a
 * sample reach another sample's verdict.
 *
 * Between samples: every sample gets a fresh context (its own global object, built-ins and
 * lodash, deserialized from the snapshot); contexts share the isolate's heap but no object: the
 * worker hands a context nothing but copied strings and one callback that only sets a flag of
 * that sample, and reads back nothing but whether the call threw. What one context's code can
 * still do to a later sample in the same isolate (a FinalizationRegistry callback, garbage that
 * fills the heap) makes that sample throw or hit a limit, never pass: that sample reruns. The
 * isolate is replaced after every sample that did not pass and after every 200 samples. The
 * worker itself is trusted code in the sandbox of the warm workers (bwrap, sealed, its own uid
 * and limits: warm-worker.ts); only a V8 bug (an escape from an isolate) would let a sample's
 * code run as the worker, and then the sandbox still bounds it.
 *
 * Off with `BERTH_JS_ISOLATES=0`, with `--reference`, outside bwrap, or when isolated-vm (an
 * optional dependency, a native addon built at install) is missing or does not load in the
 * sandbox's node: then every sample takes the reference path. Measured in docs/function-level.md.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RunBatchOptions } from '../types.ts';
import { type AnswerCheck, WarmWorker } from './warm-worker.ts';

const require = createRequire(import.meta.url);

/** The sample's file as node's loader would name it (in the sandbox's /sample). */
const SAMPLE_FILE = '/sample/main.js';

/**
 * V8's stack limit of the worker, kB: a quarter of node's default 984 kB. A frame's size depends
 * on the tier its function runs in (an interpreted frame is larger than an optimized one), so the
 * margin is wide: measured, a small recursive function reaches depth 2,500 here and 12,000 in a
 * `node` of default stack; a recursion that fits here fits under node, a deeper one reruns there.
 */
const STACK_KB = 256;

/** Samples one isolate runs (their contexts each fresh) before it is replaced. */
const SAMPLES_PER_ISOLATE = 200;

/** Largest heap of an isolate, MiB (a quarter of the sample's memory limit when that is smaller). */
const MAX_ISOLATE_MB = 512;

/** How a sample ended on the fast path; only `passed` stands. */
export type FastOutcome = 'passed' | 'threw' | 'lacks' | 'timeout' | 'memory';

const OUTCOMES: readonly string[] = ['passed', 'threw', 'lacks', 'timeout', 'memory'];

/** Whether the fast path is wanted (`BERTH_JS_ISOLATES=0` turns it off). */
export function isolatesEnabled(): boolean {
  return process.env.BERTH_JS_ISOLATES !== '0';
}

/** The folder of the installed isolated-vm with its built addon, or undefined. */
export function isolatedVmDir(): string | undefined {
  try {
    const dir = dirname(require.resolve('isolated-vm/package.json'));
    return existsSync(join(dir, 'out', 'isolated_vm.node')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Node's globals that ECMAScript lacks (and names a program might probe for them): touching one
 * on the fast path sends the sample to the reference path.
 */
const NODE_GLOBALS = [
  'process',
  'Buffer',
  'global',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'clearImmediate',
  'queueMicrotask',
  'structuredClone',
  'TextEncoder',
  'TextDecoder',
  'URL',
  'URLSearchParams',
  'fetch',
  'performance',
  'console',
  'atob',
  'btoa',
  'AbortController',
  'AbortSignal',
  'Event',
  'EventTarget',
  'MessageChannel',
  'MessagePort',
  'MessageEvent',
  'BroadcastChannel',
  'Blob',
  'File',
  'crypto',
  'Crypto',
  'CryptoKey',
  'SubtleCrypto',
  'navigator',
  'Headers',
  'Request',
  'Response',
  'FormData',
  'WebSocket',
  'DOMException',
  'ReadableStream',
  'WritableStream',
  'TransformStream',
  'CompressionStream',
  'DecompressionStream',
  'require',
  'module',
  'exports',
  '__filename',
  '__dirname',
  'self',
  'window',
];

/**
 * The worker, run by the sandbox's `node` with `-e`. Reads one JSON request per line
 * (`{id, program, timeout_ms, memory_mb}`), answers one line each (`{id, outcome, elapsed}`);
 * its first line is `{"ready": true}`, written once isolated-vm loaded and the snapshot is built
 * (it exits 3 when either fails). Trusted code: it runs no sample code outside an isolate.
 */
export const ISOLATE_WORKER = String.raw`'use strict';
const fs = require('fs');
const path = require('path');
let ivm;
try {
  ivm = require(process.env.BERTH_IVM);
} catch (error) {
  process.stderr.write('berth isolate worker: isolated-vm does not load: ' + (error && error.message) + '\n');
  process.exit(3);
}
const lodashFile = fs.realpathSync(process.env.BERTH_LODASH);
const sampleFile = process.env.BERTH_SAMPLE_FILE;
const NODE_GLOBALS = JSON.parse(process.env.BERTH_NODE_GLOBALS);
const SAMPLES_PER_ISOLATE = Number(process.env.BERTH_SAMPLES_PER_ISOLATE);
// Built into the snapshot: lodash loaded as node's CommonJS loader loads it, and __berth(lacks,
// program), which removes itself, sets the traps, and runs the program as node's module wrapper.
const SETUP = '(function () {\n' +
  "'use strict';\n" +
  'const apply = Reflect.apply;\n' +
  'const defineProperty = Object.defineProperty;\n' +
  'const getDescriptor = Object.getOwnPropertyDescriptor;\n' +
  'const FunctionCtor = Function;\n' +
  'const ReferenceErrorCtor = ReferenceError;\n' +
  'const ErrorCtor = Error;\n' +
  'const getter = (proto, name) => getDescriptor(proto, name).get;\n' +
  'const typedArrayTag = getter(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag);\n' +
  // node's util.types checks internal slots; so do these (a getter or method that throws without the slot).
  'const slotTest = (fn, except) => (value) => {\n' +
  '  if (value === except) return false;\n' +
  '  try { apply(fn, value, []); return true; } catch { return false; }\n' +
  '};\n' +
  'const types = {\n' +
  '  isTypedArray: (value) => apply(typedArrayTag, value, []) !== undefined,\n' +
  '  isDate: slotTest(Date.prototype.getTime),\n' +
  "  isMap: slotTest(getter(Map.prototype, 'size')),\n" +
  "  isSet: slotTest(getter(Set.prototype, 'size')),\n" +
  "  isArrayBuffer: slotTest(getter(ArrayBuffer.prototype, 'byteLength')),\n" +
  "  isRegExp: slotTest(getter(RegExp.prototype, 'global'), RegExp.prototype),\n" +
  '};\n' +
  'const lodashModule = { exports: {} };\n' +
  "lodashModule.require = (name) => { if (name === 'util') return { types }; throw new ErrorCtor('no module ' + name); };\n" +
  '(function (exports, require, module, __filename, __dirname) {' + fs.readFileSync(lodashFile, 'utf8') + '\n})' +
  '.call(lodashModule.exports, lodashModule.exports, undefined, lodashModule, ' + JSON.stringify(lodashFile) + ', ' +
  JSON.stringify(path.dirname(lodashFile)) + ');\n' +
  'const lodash = lodashModule.exports;\n' +
  'const NODE_GLOBALS = ' + JSON.stringify(NODE_GLOBALS) + ';\n' +
  // The traps are set here, in the snapshot; each calls the callback of the sample that runs.
  'let lacks = () => {};\n' +
  "const trap = (name) => function () { lacks(); throw new ReferenceErrorCtor(name + ' is not defined'); };\n" +
  'for (const name of NODE_GLOBALS) defineProperty(globalThis, name, { configurable: false, enumerable: false, get: trap(name), set: trap(name) });\n' +
  "defineProperty(globalThis, '__berth', { configurable: true, writable: false, enumerable: false, value: function (callback, program) {\n" +
  '  delete globalThis.__berth;\n' +
  '  lacks = callback;\n' +
  '  const require = function require(name) {\n' +
  "    if (name === 'lodash') return lodash;\n" +
  '    lacks();\n' +
  '    throw new ErrorCtor("Cannot find module \'" + name + "\'");\n' +
  '  };\n' +
  '  const module = { exports: {} };\n' +
  "  for (const name of ['resolve', 'cache', 'main', 'extensions', 'paths']) defineProperty(require, name, { get: trap('require.' + name), set: trap('require.' + name) });\n" +
  "  for (const name of ['id', 'path', 'filename', 'loaded', 'parent', 'children', 'paths', 'require']) defineProperty(module, name, { get: trap('module.' + name), set: trap('module.' + name) });\n" +
  "  const main = FunctionCtor('exports', 'require', 'module', '__filename', '__dirname', program);\n" +
  // What the program throws stays here (copying it out could run its getters outside the time limit).
  '  try {\n' +
  '    apply(main, module.exports, [module.exports, require, module, ' + JSON.stringify(sampleFile) + ', ' +
  JSON.stringify(path.dirname(sampleFile)) + ']);\n' +
  '  } catch {\n' +
  '    return false;\n' +
  '  }\n' +
  '  return true;\n' +
  '} });\n' +
  '})();\n';
let snapshot;
try {
  snapshot = ivm.Isolate.createSnapshot([{ code: SETUP, filename: 'berth-isolate-setup.js' }]);
} catch (error) {
  process.stderr.write('berth isolate worker: the snapshot could not be built: ' + (error && error.message) + '\n');
  process.exit(3);
}
let isolate;
let isolateMb = 0;
let runs = 0;
function freshIsolate(memoryMb) {
  if (isolate && !isolate.isDisposed) isolate.dispose();
  isolate = new ivm.Isolate({ snapshot, memoryLimit: memoryMb });
  isolateMb = memoryMb;
  runs = 0;
}
// One callback for every sample: it marks the sample that runs (a context left from an earlier
// sample calling it can only send the current one to the reference path).
let lacks = false;
const lacksCallback = new ivm.Callback(() => { lacks = true; });
function runOne(request) {
  const started = performance.now();
  lacks = false;
  let outcome = 'threw';
  let context;
  try {
    if (!isolate || isolate.isDisposed || isolateMb !== request.memory_mb || runs >= SAMPLES_PER_ISOLATE)
      freshIsolate(request.memory_mb);
    runs += 1;
    context = isolate.createContextSync();
    const run = context.global.getSync('__berth', { reference: true });
    const deadline = Math.max(1, Math.round(request.timeout_ms));
    const ended = run.applySync(undefined, [lacksCallback, request.program], {
      timeout: deadline,
      arguments: { copy: true },
    });
    if (ended === true) outcome = 'passed';
  } catch {
    if (isolate && isolate.isDisposed) outcome = 'memory';
    else if (performance.now() - started >= request.timeout_ms) outcome = 'timeout';
  } finally {
    try { if (context) context.release(); } catch {}
  }
  if (lacks) outcome = 'lacks';
  // A sample that timed out, filled the heap or touched a trap gets the next one a fresh isolate.
  if (outcome !== 'passed' && outcome !== 'threw') {
    try { if (isolate && !isolate.isDisposed) isolate.dispose(); } catch {}
    isolate = undefined;
  }
  return { id: request.id, outcome, elapsed: (performance.now() - started) / 1000 };
}
process.stdout.write('{"ready": true}\n');
let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, end);
    buffered = buffered.slice(end + 1);
    if (line.trim() !== '') process.stdout.write(JSON.stringify(runOne(JSON.parse(line))) + '\n');
  }
});
process.stdin.on('end', () => process.exit(0));
`;

/** What the fast path needs on this machine, or undefined when it is off or cannot run. */
export interface IsolateSetup {
  /** isolated-vm's folder (shown read-only in the sandbox). */
  ivmDir: string;
  /** lodash's main file, as the sample's `require("lodash")` resolves it. */
  lodashFile: string;
}

/** The fast path's set-up, or undefined (off, isolated-vm missing, lodash missing). */
export function isolateSetup(): IsolateSetup | undefined {
  if (!isolatesEnabled()) return undefined;
  const ivmDir = isolatedVmDir();
  if (!ivmDir) return undefined;
  try {
    return { ivmDir, lodashFile: require.resolve('lodash') };
  } catch {
    return undefined;
  }
}

/** Starts the isolate worker of `slot` in the warm workers' sandbox. */
export function startIsolateWorker(
  slot: number,
  options: RunBatchOptions,
  setup: IsolateSetup,
): Promise<WarmWorker> {
  return WarmWorker.startCommand(
    slot,
    options,
    ['node', '--no-node-snapshot', `--stack-size=${STACK_KB}`, '-e', ISOLATE_WORKER],
    {
      env: {
        BERTH_IVM: setup.ivmDir,
        BERTH_LODASH: setup.lodashFile,
        BERTH_SAMPLE_FILE: SAMPLE_FILE,
        BERTH_NODE_GLOBALS: JSON.stringify(NODE_GLOBALS),
        BERTH_SAMPLES_PER_ISOLATE: String(SAMPLES_PER_ISOLATE),
      },
      readOnlyPaths: [setup.ivmDir, dirname(setup.lodashFile)],
    },
  );
}

interface FastAnswer {
  id: number;
  outcome: FastOutcome;
  /** Seconds. */
  elapsed: number;
}

const fastAnswer: AnswerCheck = (a) =>
  typeof a.outcome === 'string' &&
  OUTCOMES.includes(a.outcome) &&
  typeof a.elapsed === 'number' &&
  Number.isFinite(a.elapsed);

/**
 * Runs one assembled program on the fast path: its outcome, or undefined when the worker died or
 * broke the protocol (the caller replaces it). Time limit: half the sample's; heap: a quarter of
 * its memory limit, at most 512 MiB.
 */
export async function runOnIsolate(
  worker: WarmWorker,
  program: string,
  options: RunBatchOptions,
): Promise<FastOutcome | undefined> {
  const timeoutMs = Math.max(500, (options.timeoutSec * 1000) / 2);
  const memoryMb = Math.max(
    16,
    Math.min(MAX_ISOLATE_MB, Math.floor(options.sandbox.memoryBytes / 4 / 1024 / 1024)),
  );
  const answer = await worker.ask<FastAnswer>(
    { program, timeout_ms: timeoutMs, memory_mb: memoryMb },
    timeoutMs / 1000,
    fastAnswer,
  );
  return answer?.outcome;
}

/** Samples per fast-path outcome in this process (for tests and benches: which path a verdict came from). */
export const isolateStats: Record<FastOutcome | 'worker_lost', number> = {
  passed: 0,
  threw: 0,
  lacks: 0,
  timeout: 0,
  memory: 0,
  worker_lost: 0,
};
