/**
 * berth's node:test guard: a CommonJS module loaded with `--require` into every `node --test`
 * process before any code of the repository (node passes the flag on to the child process it
 * spawns for each test file).
 *
 * Everywhere it freezes the exports of `node:assert`, `node:assert/strict` and `node:test`, so
 * code the tests import cannot swap an assertion or the test functions for no-ops.
 *
 * In each test file's child process (the runner's own children only) it is also berth's observer
 * of every test's outcome, one the child's report stream cannot fool (breaker round 2 rewrote
 * the child's framed `test:fail` messages as `test:pass` in `process.stdout.write`):
 *
 * - a per-child key: an X25519 key pair made before any repository code runs, agreed with
 *   berth's public key (a fresh pair per test run; the private half never leaves berth), so
 *   the key is known to the guard's closure and to berth only;
 * - a hello, sent before any repository code runs, on the child's stdout as one of node's own
 *   framed v8 messages (`berth:guard`): node's runner passes it to its reporters, berth's
 *   reporter (node-probe.ts) writes it down. The child's stdout is a socket to the runner: what
 *   is written is gone, no code of the child can read it back or open it again;
 * - node's `Test` objects (tests, suites, hooks: node creates each as an async resource): an
 *   async hook gives each one an accessor for `fn` (the function node calls is the guard's
 *   wrapper; an assignment after node's own is refused and recorded) and for `error` (the
 *   moment node decides the test failed);
 * - a last record when the process exits, so a stream cut short (records dropped from the
 *   end) is seen;
 * - one record per outcome (the function returned or threw; node failed the test), numbered,
 *   with an HMAC-SHA-256 computed in the guard's own JavaScript (no crypto object whose
 *   prototype repository code could reach), sent the same way.
 *
 * What the guard sends is checked against what the runner reported in `checkNodeGuard`.
 * Losing records (closed descriptors, a patched binding) leaves passes unrecorded: refused.
 * Forged, duplicated or out-of-order records: refused. What stays open: code aimed at the
 * guard's own memory (`/proc/self/mem`, the inspector), see docs/security.md.
 */
import { createHmac, createPublicKey, diffieHellman, type KeyObject, timingSafeEqual } from 'node:crypto';
import { resolve } from 'node:path';

/** The guard module's source for one test run (berth's X25519 public key, SPKI DER in base64). */
export function nodeGuardSource(publicKey: string): string {
  return GUARD_SOURCE.replace('@@BERTH_PUBLIC_KEY@@', publicKey);
}

const GUARD_SOURCE = String.raw`'use strict';
// berth's node:test guard (see berth: src/verifiers/tampering/node-guard.ts).
for (const name of ['node:assert', 'node:assert/strict', 'node:test']) {
  try {
    const m = require(name);
    Object.freeze(m);
    if (m && m.strict) Object.freeze(m.strict);
  } catch {}
}
if (!process.env.NODE_TEST_CONTEXT) {
  // The runner (or a plain node): its children are the test files' processes.
  process.env.BERTH_GUARD_RUNNER = String(process.pid);
} else if (process.env.NODE_TEST_CONTEXT === 'child-v8' && process.env.BERTH_GUARD_RUNNER === String(process.ppid)) {
  // A test file's process of the runner, reporting to it in node's framed v8 messages.
  try {
    berthGuardChild('@@BERTH_PUBLIC_KEY@@');
  } catch {}
}

function berthGuardChild(berthKey) {
  const crypto = require('node:crypto');
  const fs = require('node:fs');
  const v8 = require('node:v8');
  const asyncHooks = require('node:async_hooks');
  const isPromise = require('node:util').types.isPromise;
  // Everything used after repository code starts is captured now.
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getOwn = Object.getOwnPropertyDescriptor;
  const getProto = Object.getPrototypeOf;
  const hasOwn = Object.prototype.hasOwnProperty;
  // An own data property's value (undefined otherwise): never a getter, never the prototype chain.
  const own = (o, k) => {
    const d = getOwn(o, k);
    return d && apply(hasOwn, d, ['value']) ? d.value : undefined;
  };
  const charCodeAt = String.prototype.charCodeAt;
  const promiseThen = Promise.prototype.then;
  const promiseResolve = Promise.resolve;
  const PromiseCtor = Promise;
  const WM = WeakMap;
  const wmGet = WeakMap.prototype.get;
  const wmSet = WeakMap.prototype.set;
  const U8 = Uint8Array;
  const U32 = Uint32Array;
  const writeSync = fs.writeSync;
  const Serializer = v8.DefaultSerializer;
  const sWriteHeader = Serializer.prototype.writeHeader;
  const sWriteRaw = Serializer.prototype.writeRawBytes;
  const sWriteValue = Serializer.prototype.writeValue;
  const sRelease = Serializer.prototype.releaseBuffer;
  const HEX = '0123456789abcdef';
  const pid = process.pid;

  // ---- SHA-256 and HMAC over bytes, in plain JavaScript (no method of a reachable object).
  const K256 = new U32([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const H0 = new U32([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  // The hash of (the blocks already absorbed into start: done bytes) followed by bytes[0, len).
  function sha256(start, done, bytes, len, pad) {
    const total = pad ? (((len + 9 + 63) / 64) | 0) * 64 : len;
    const m = new U8(total);
    for (let i = 0; i < len; i++) m[i] = bytes[i];
    if (pad) {
      m[len] = 0x80;
      const bits = (done + len) * 8;
      m[total - 1] = bits & 255;
      m[total - 2] = (bits >>> 8) & 255;
      m[total - 3] = (bits >>> 16) & 255;
      m[total - 4] = (bits >>> 24) & 255;
    }
    const h = new U32(8);
    for (let i = 0; i < 8; i++) h[i] = start[i];
    const w = new U32(64);
    for (let off = 0; off < total; off += 64) {
      for (let t = 0; t < 16; t++) {
        const j = off + t * 4;
        w[t] = (m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3];
      }
      for (let t = 16; t < 64; t++) {
        const a = w[t - 15];
        const b = w[t - 2];
        const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
        const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
      }
      let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (let t = 0; t < 64; t++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const ch = (e & f) ^ (~e & g);
        const t1 = (k + S1 + ch + K256[t] + w[t]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const maj = (a & b) ^ (a & c) ^ (b & c);
        const t2 = (S0 + maj) | 0;
        k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
    }
    if (!pad) return h;
    const out = new U8(32);
    for (let i = 0; i < 8; i++) {
      out[i * 4] = h[i] >>> 24; out[i * 4 + 1] = (h[i] >>> 16) & 255;
      out[i * 4 + 2] = (h[i] >>> 8) & 255; out[i * 4 + 3] = h[i] & 255;
    }
    return out;
  }
  function utf8(s) {
    const out = new U8(s.length * 3);
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      let c = apply(charCodeAt, s, [i]);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        const d = apply(charCodeAt, s, [i + 1]);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
      }
      if (c < 0x80) out[n++] = c;
      else if (c < 0x800) { out[n++] = 0xc0 | (c >> 6); out[n++] = 0x80 | (c & 63); }
      else if (c < 0x10000) { out[n++] = 0xe0 | (c >> 12); out[n++] = 0x80 | ((c >> 6) & 63); out[n++] = 0x80 | (c & 63); }
      else { out[n++] = 0xf0 | (c >> 18); out[n++] = 0x80 | ((c >> 12) & 63); out[n++] = 0x80 | ((c >> 6) & 63); out[n++] = 0x80 | (c & 63); }
    }
    return { bytes: out, length: n };
  }

  // ---- The key: agreed with berth's public key, kept in this closure as pads.
  const ours = crypto.generateKeyPairSync('x25519');
  const theirs = crypto.createPublicKey({ key: Buffer.from(berthKey, 'base64'), format: 'der', type: 'spki' });
  const secret = crypto.diffieHellman({ privateKey: ours.privateKey, publicKey: theirs });
  const ourPublic = ours.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const ipad = new U8(64);
  const opad = new U8(64);
  for (let i = 0; i < 64; i++) {
    const b = i < secret.length ? secret[i] : 0;
    ipad[i] = b ^ 0x36;
    opad[i] = b ^ 0x5c;
  }
  secret.fill(0);
  // HMAC's padded keys hashed once (RFC 2104: each is one block), kept as hash states.
  const innerStart = sha256(H0, 0, ipad, 64, false);
  const outerStart = sha256(H0, 0, opad, 64, false);
  ipad.fill(0);
  opad.fill(0);
  function mac(text) {
    const m = utf8(text);
    const ih = sha256(innerStart, 64, m.bytes, m.length, true);
    const d = sha256(outerStart, 64, ih, 32, true);
    let hex = '';
    for (let i = 0; i < 32; i++) hex = hex + HEX[d[i] >>> 4] + HEX[d[i] & 15];
    return hex;
  }
  function quote(s) {
    if (typeof s !== 'string') return 'null';
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const c = apply(charCodeAt, s, [i]);
      if (c < 0x20 || c === 34 || c === 92 || (c >= 0xd800 && c < 0xe000))
        out = out + '\\u' + HEX[(c >>> 12) & 15] + HEX[(c >>> 8) & 15] + HEX[(c >>> 4) & 15] + HEX[c & 15];
      else out = out + s[i];
    }
    return out + '"';
  }

  // ---- Sending: node's own framing (v8 header, 4-byte length, v8 value) straight to fd 1.
  let seq = 0;
  function frame(value) {
    const s = new Serializer();
    apply(sWriteHeader, s, []);
    apply(sWriteRaw, s, [new U8(4)]);
    apply(sWriteHeader, s, []);
    apply(sWriteValue, s, [value]);
    const b = apply(sRelease, s, []);
    const hl = 2;
    const n = b.length - hl - 4;
    b[hl] = (n >>> 24) & 255; b[hl + 1] = (n >>> 16) & 255; b[hl + 2] = (n >>> 8) & 255; b[hl + 3] = n & 255;
    return b;
  }
  // Objects and arrays are made as literals (own properties: no setter of a prototype runs).
  function send(body, key) {
    const data = { nesting: 0, pid, body, mac: mac(body), key };
    try {
      const b = frame({ type: 'berth:guard', data });
      let at = 0;
      while (at < b.length) at += writeSync(1, b, at, b.length - at);
    } catch {}
  }
  // path: the test's names as JSON array text, or null.
  function record(kind, path, event) {
    seq = seq + 1;
    send('{"seq":' + seq + ',"kind":' + quote(kind) + ',"event":' + quote(event) + ',"path":' + (path || 'null') + '}', null);
  }
  send(
    '{"seq":0,"kind":"hello","pid":' + pid + ',"ppid":' + process.ppid + ',"file":' + quote(process.argv[1]) + '}',
    ourPublic,
  );

  // ---- node's Test objects, by where they were made: an async resource of type 'Test' is one
  // of node's tests, suites or hooks when the constructor that called AsyncResource's is node's
  // own Test constructor (node:internal/test_runner/test), read from a stack trace formatted by
  // the guard (its own prepareStackTrace, CallSite methods captured now). A class of the
  // repository named Test is not tracked: its functions get no record.
  const ErrorCtor = Error;
  const captureStackTrace = Error.captureStackTrace;
  const sitesOf = (e, cs) => cs;
  let siteFile;
  let siteIsConstructor;
  {
    const saved = ErrorCtor.prepareStackTrace;
    ErrorCtor.prepareStackTrace = sitesOf;
    const holder = {};
    apply(captureStackTrace, ErrorCtor, [holder]);
    const sites = holder.stack;
    ErrorCtor.prepareStackTrace = saved;
    const proto = getProto(sites[0]);
    siteFile = proto.getFileName;
    siteIsConstructor = proto.isConstructor;
  }
  function madeByNode() {
    const saved = ErrorCtor.prepareStackTrace;
    const limit = ErrorCtor.stackTraceLimit;
    let sites;
    try {
      ErrorCtor.prepareStackTrace = sitesOf;
      ErrorCtor.stackTraceLimit = 12;
      const holder = {};
      apply(captureStackTrace, ErrorCtor, [holder]);
      sites = holder.stack;
    } catch {
      return false;
    } finally {
      try {
        ErrorCtor.prepareStackTrace = saved;
        ErrorCtor.stackTraceLimit = limit;
      } catch {}
    }
    if (!sites || typeof sites !== 'object' || typeof sites.length !== 'number') return false;
    for (let i = 0; i + 1 < sites.length && i < 12; i++) {
      const site = sites[i];
      if (apply(siteFile, site, []) !== 'node:async_hooks' || !apply(siteIsConstructor, site, [])) continue;
      const next = sites[i + 1];
      return apply(siteFile, next, []) === 'node:internal/test_runner/test' && apply(siteIsConstructor, next, []) === true;
    }
    return false;
  }
  const kinds = new WM();
  const paths = new WM();
  function kindOf(res) {
    const proto = getProto(res);
    let kind = apply(wmGet, kinds, [proto]);
    if (kind === undefined) {
      const c = proto ? own(proto, 'constructor') : undefined;
      const name = typeof c === 'function' ? own(c, 'name') : undefined;
      kind = typeof name === 'string' ? name : '?';
      apply(wmSet, kinds, [proto, kind]);
    }
    return kind;
  }
  // The names from the test's outermost ancestor below node's root (JSON array text), read as
  // own data properties; null when they are not.
  function pathOf(res) {
    let path = '';
    let n = 0;
    for (let t = res; ; ) {
      const d = getOwn(t, 'parent');
      if (!d || !apply(hasOwn, d, ['value'])) return null;
      const parent = d.value;
      if (parent === null) break;
      const name = own(t, 'name');
      if (typeof name !== 'string' || typeof parent !== 'object' || ++n > 1000) return null;
      path = path === '' ? quote(name) : quote(name) + ',' + path;
      t = parent;
    }
    return '[' + path + ']';
  }
  function wrap(fn, kind, path, settle) {
    const length = typeof fn.length === 'number' ? fn.length : 0;
    const wrapped = function (...args) {
      let done = false;
      const note = (event) => {
        if (done) return;
        done = true;
        settle();
        record(kind, path, event);
      };
      const last = args.length - 1;
      const callback = length >= 2 && args.length === length && typeof args[last] === 'function';
      if (callback) {
        const cb = args[last];
        args[last] = function (error) {
          note(error ? 'threw' : 'returned');
          return apply(cb, this, arguments);
        };
      }
      let result;
      try {
        result = apply(fn, this, args);
      } catch (error) {
        note('threw');
        throw error;
      }
      if (isPromise(result) || (result !== null && (typeof result === 'object' || typeof result === 'function') && typeof result.then === 'function')) {
        const p = isPromise(result) ? result : apply(promiseResolve, PromiseCtor, [result]);
        return apply(promiseThen, p, [
          (v) => { note('returned'); return v; },
          (e) => { note('threw'); throw e; },
        ]);
      }
      if (!callback) note('returned');
      return result;
    };
    defineProperty(wrapped, 'length', { value: length });
    return wrapped;
  }
  // Whether node's harness finished this process's tests: its root reported the run, every test
  // and suite node created ended, and the process ended on its own (or node's --test-force-exit
  // after the root reported), never through a call to process.exit before that.
  let rootReported = false;
  let unfinished = 0;
  let beforeExit = false;
  let exitCalled = false;
  let reportedAtExitCall = false;
  const forceExit = process.execArgv.some((a) => a === '--test-force-exit');
  function track(res) {
    const kind = kindOf(res);
    const isParentNull = () => {
      const d = getOwn(res, 'parent');
      return !!d && apply(hasOwn, d, ['value']) && d.value === null;
    };
    // A test or suite has ended for the guard when its function returned or threw, or node
    // failed it (cancelled ones too), or it was made skipped: never by a flag code can set.
    let counted = false;
    let settled = false;
    function settle() {
      if (settled) return;
      settled = true;
      if (counted) unfinished--;
    }
    // Flags node sets once in the constructor: a later change to true (t.todo(), t.skip(), or
    // code reaching the object) is recorded, so a failure it hides is still a failure.
    for (const flag of ['isTodo', 'skipped']) {
      let value;
      let declared = false;
      defineProperty(res, flag, {
        configurable: false,
        enumerable: true,
        get() { return value; },
        set(v) {
          if (declared && v && !value) record(kind, apply(wmGet, paths, [res]) ?? null, flag === 'isTodo' ? 'todo-set' : 'skip-set');
          else if (!declared && v && flag === 'skipped') settle();
          declared = true;
          value = v;
        },
      });
    }
    let finished;
    defineProperty(res, 'finished', {
      configurable: false,
      enumerable: true,
      get() { return finished; },
      set(v) {
        // node's first assignment (in the constructor, its parent set): count the node.
        if (!counted && finished === undefined && (kind === 'Test' || kind === 'Suite') && !isParentNull()) {
          counted = true;
          if (!settled) unfinished++;
        }
        finished = v;
      },
    });
    let reported;
    defineProperty(res, 'reported', {
      configurable: false,
      enumerable: true,
      get() { return reported; },
      set(v) {
        if (v === true && isParentNull()) rootReported = true;
        reported = v;
      },
    });
    let raw;
    let current;
    let set = false;
    let error = null;
    defineProperty(res, 'fn', {
      configurable: false,
      enumerable: true,
      get() { return current; },
      set(value) {
        // node assigns a test's function once (a suite's again under --test-name-pattern).
        if (set && kind !== 'Suite') {
          if (value !== raw && value !== current) record(kind, apply(wmGet, paths, [res]) ?? null, 'fn-replaced');
          return;
        }
        set = true;
        raw = value;
        const path = kind === 'TestHook' ? '[]' : pathOf(res);
        apply(wmSet, paths, [res, path]);
        current = typeof value === 'function' ? wrap(value, kind, path, settle) : value;
      },
    });
    defineProperty(res, 'error', {
      configurable: false,
      enumerable: true,
      get() { return error; },
      set(value) {
        if (value !== null && value !== undefined && (error === null || error === undefined))
          { settle(); record(kind, apply(wmGet, paths, [res]) ?? null, 'failed'); }
        error = value;
      },
    });
  }
  // The last record: the process is ending (a stream cut before it is refused by berth).
  let ended = false;
  let created = 0;
  process.on('beforeExit', () => { beforeExit = true; });
  const exit = process.exit;
  process.exit = function exit_(...args) {
    if (!exitCalled) {
      exitCalled = true;
      reportedAtExitCall = rootReported;
    }
    return apply(exit, process, args);
  };
  process.on('exit', () => {
    if (ended) return;
    ended = true;
    const natural = !exitCalled && beforeExit;
    const forced = exitCalled && forceExit && reportedAtExitCall;
    const complete = created === 0 || (rootReported && unfinished === 0 && (natural || forced));
    seq = seq + 1;
    send('{"seq":' + seq + ',"kind":"process","event":"exit","path":null,"complete":' + complete + ',"unfinished":' + unfinished + ',"harness":' + rootReported + ',"explicit":' + exitCalled + '}', null);
  });
  asyncHooks
    .createHook({
      init(id, type, trigger, resource) {
        if (type !== 'Test' || !madeByNode()) return;
        created++;
        try {
          track(resource);
        } catch {
          record('?', null, 'untracked');
        }
      },
    })
    .enable();
}
`;

/** One message of the guard as berth's reporter wrote it down (`{"type":"guard", ...}`). */
export interface GuardLine {
  pid?: unknown;
  body?: unknown;
  mac?: unknown;
  key?: unknown;
}

/** What a child's guard saw, per test (ids as berth's TAP parser writes them: names joined by ' > '). */
export interface GuardFile {
  /** The test file, as the child's argv named it. */
  file: string;
  pid: number;
  returned: Map<string, number>;
  threw: Map<string, number>;
  failed: Map<string, number>;
  replaced: Set<string>;
  /** Tests made todo or skipped after node made them (`t.todo()`, `t.skip()`, or code reaching the test). */
  undeclared: Set<string>;
  /** Hooks (before, after, beforeEach, afterEach) whose function threw. */
  hooksThrew: number;
  /** Whether the stream ends with the guard's record of the process exiting (else it was cut short). */
  ended: boolean;
  /**
   * Whether node's harness finished the process's tests before it ended: its root reported the
   * run, every test and suite node created ended, and the process ended on its own (not through
   * `process.exit` before that). False when the exit record says otherwise or is missing.
   */
  complete: boolean;
  /** Test and suite nodes created in the process that never ended (from the exit record). */
  unfinished: number;
}

/** The guards' messages read and authenticated. */
export interface GuardReport {
  /** Test files' children with one valid hello (by resolved file path). */
  files: Map<string, GuardFile>;
  /** Why the stream cannot be trusted (forged, duplicated, out of order), if it cannot. */
  invalid: string[];
  /** Files with more than one hello from the runner's children. */
  duplicated: string[];
  /** Guards of processes that are not the runner's children (tests that start node themselves). */
  others: number;
}

interface Hello {
  pid: number;
  ppid: number;
  file: string;
  key: Buffer;
}

function parseBody(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function macOf(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body, 'utf8').digest();
}

function macOk(key: Buffer, body: string, mac: unknown): boolean {
  if (typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(macOf(key, body), Buffer.from(mac, 'hex'));
}

/**
 * Reads the guards' messages: one hello per child (its key agreed with berth's private key),
 * then records numbered 1..n, each with a valid MAC. Anything else makes the stream invalid.
 * @param runnerPid the `node --test` process's pid (its children are the test files' processes)
 */
export function readGuardStream(
  lines: GuardLine[],
  privateKey: KeyObject,
  runnerPid: number | undefined,
): GuardReport {
  const invalid: string[] = [];
  const hellos = new Map<number, Hello>();
  const records: { pid: number; seq: number; body: Record<string, unknown> }[] = [];
  const pending: GuardLine[] = [];
  for (const line of lines) {
    const body = parseBody(line.body);
    if (!body || typeof line.pid !== 'number' || typeof line.body !== 'string') {
      invalid.push("a guard message that is not the guard's (no JSON body or pid)");
      continue;
    }
    if (body.kind !== 'hello') {
      pending.push(line);
      continue;
    }
    if (hellos.has(line.pid)) {
      invalid.push(`a second hello for process ${line.pid}`);
      continue;
    }
    let key: Buffer;
    try {
      const theirs = createPublicKey({
        key: Buffer.from(String(line.key), 'base64'),
        format: 'der',
        type: 'spki',
      });
      key = diffieHellman({ privateKey, publicKey: theirs });
    } catch {
      invalid.push(`a hello for process ${line.pid} without a usable key`);
      continue;
    }
    if (!macOk(key, line.body, line.mac) || body.seq !== 0 || body.pid !== line.pid) {
      invalid.push(`a hello for process ${line.pid} that does not authenticate`);
      continue;
    }
    hellos.set(line.pid, {
      pid: line.pid,
      ppid: typeof body.ppid === 'number' ? body.ppid : -1,
      file: typeof body.file === 'string' ? body.file : '',
      key,
    });
  }
  for (const line of pending) {
    const pid = line.pid as number;
    const hello = hellos.get(pid);
    const body = parseBody(line.body) as Record<string, unknown>;
    if (!hello) {
      invalid.push(`a guard record for process ${pid}, which sent no hello`);
      continue;
    }
    if (!macOk(hello.key, line.body as string, line.mac)) {
      invalid.push(`a guard record for process ${pid} that does not authenticate (forged or changed)`);
      continue;
    }
    if (typeof body.seq !== 'number') {
      invalid.push(`a guard record for process ${pid} without a number`);
      continue;
    }
    records.push({ pid, seq: body.seq, body });
  }
  const byPid = new Map<number, typeof records>();
  for (const r of records) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r]);
  for (const [pid, list] of byPid) {
    list.sort((a, b) => a.seq - b.seq);
    list.forEach((r, i) => {
      if (r.seq !== i + 1)
        invalid.push(`process ${pid}'s guard records are not numbered 1..n (record ${r.seq} at ${i + 1})`);
    });
  }
  const files = new Map<string, GuardFile>();
  const duplicated: string[] = [];
  let others = 0;
  for (const hello of hellos.values()) {
    if (runnerPid === undefined || hello.ppid !== runnerPid) {
      others++;
      continue;
    }
    const file = resolve('/', hello.file);
    if (files.has(file)) {
      duplicated.push(hello.file);
      continue;
    }
    const seen: GuardFile = {
      file: hello.file,
      pid: hello.pid,
      returned: new Map(),
      threw: new Map(),
      failed: new Map(),
      replaced: new Set(),
      undeclared: new Set(),
      hooksThrew: 0,
      ended: false,
      complete: false,
      unfinished: 0,
    };
    const list = byPid.get(hello.pid) ?? [];
    list.forEach((r, i) => {
      if (r.body.kind !== 'process' || r.body.event !== 'exit') return;
      if (i !== list.length - 1) {
        invalid.push(`process ${hello.pid}'s guard records go on after its exit`);
        return;
      }
      seen.ended = true;
      seen.complete = r.body.complete === true;
      seen.unfinished = typeof r.body.unfinished === 'number' ? r.body.unfinished : 0;
    });
    for (const r of list) {
      const { kind, event, path } = r.body;
      if (kind === 'TestHook' && event === 'threw') seen.hooksThrew++;
      if (kind !== 'Test' && kind !== 'Suite') continue;
      if (!Array.isArray(path) || !path.every((p) => typeof p === 'string') || path.length === 0) continue;
      const id = path.join(' > ');
      const bump = (m: Map<string, number>) => m.set(id, (m.get(id) ?? 0) + 1);
      if (event === 'returned') bump(seen.returned);
      else if (event === 'threw') bump(seen.threw);
      else if (event === 'failed') bump(seen.failed);
      else if (event === 'fn-replaced') seen.replaced.add(id);
      else if (event === 'todo-set' || event === 'skip-set') seen.undeclared.add(id);
    }
    files.set(file, seen);
  }
  return { files, invalid, duplicated, others };
}
