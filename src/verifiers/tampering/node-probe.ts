/**
 * berth's node:test probe: a test reporter berth adds to a `node --test` command
 * (`--test-reporter=<probe> --test-reporter-destination=<file>`, beside the command's own
 * reporters). It runs in the parent `node --test` process, which never runs the tested code (each
 * test file runs in a child process), and writes (itself, at once: its reporter destination is
 * /dev/null) one JSON line per event it receives from
 * node's runner: test starts, passes, failures (name, nesting, file), then, when the stream
 * ends, a closing line with the run's secret (under `--test-force-exit`, when the process exits
 * after the runner summed its run up: `forced: true`). The verifier checks the console's results against
 * it (src/verifiers/tampering/cross-check.ts): lines a child wrote past node's protocol (to the
 * parent's stdout, for instance) are not events. It also writes down the messages of berth's
 * guard in each test file's process (node-guard.ts), which node's runner passes on.
 *
 * The reporter is given only when the command already names its reporters with
 * `--test-reporter` (node pairs reporters with destinations by position, and the default
 * reporter depends on node's version and on whether stdout is a terminal); otherwise berth
 * relies on the console and the exit code and says so.
 */

/** The reporter module's source (an ES module; Node 18.15+ / 20+). */
export const NODE_PROBE_SOURCE = String.raw`// berth's node:test probe (see berth: src/verifiers/tampering/node-probe.ts).
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const out = process.env.BERTH_PROBE_OUT;
delete process.env.BERTH_PROBE_OUT;
let nonce = null;
try {
  nonce = readFileSync(join(out, 'nonce'), 'utf8').trim();
  unlinkSync(join(out, 'nonce'));
} catch {}
if (nonce) {
  try { writeFileSync(join(out, 'node-started'), JSON.stringify({ nonce, pid: process.pid })); } catch {}
}
// Every line is written at once, not through node's reporter stream: under --test-force-exit
// the runner ends the process right after its summary, before a stream would flush or end.
let fd = null;
if (nonce) {
  try { fd = openSync(join(out, 'node-report.jsonl'), 'w'); } catch { nonce = null; }
}
function line(value) {
  const bytes = Buffer.from(JSON.stringify(value) + '\n');
  let at = 0;
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
}
let ended = false;
function end(forced) {
  if (ended || !nonce) return;
  ended = true;
  line(forced ? { type: 'end', nonce, exitCode: process.exitCode ?? null, forced: true } : { type: 'end', nonce, exitCode: process.exitCode ?? null });
  closeSync(fd);
}
// --test-force-exit: the runner calls process.exit once its run is over and summed up (the
// root's counts, which name no file); an end is written then, and only then.
const forceExit = process.execArgv.includes('--test-force-exit');
let summed = false;
if (nonce && forceExit) process.on('exit', () => { if (summed) end(true); });

export default async function* berthProbe(source) {
  for await (const event of source) {
    if (!nonce || ended) continue;
    const t = event.type;
    const d = event.data ?? {};
    if (t === 'test:start' || t === 'test:pass' || t === 'test:fail') {
      const skip = d.skip !== undefined && d.skip !== false;
      const todo = d.todo !== undefined && d.todo !== false;
      line({ type: t, name: d.name, nesting: d.nesting, file: d.file ?? null, skip, todo });
    } else if (t === 'berth:guard') {
      // A message of berth's guard in a test file's process (node-guard.ts), checked by berth.
      line({ type: 'guard', pid: d.pid, body: d.body, mac: d.mac, key: d.key });
    } else if (t === 'test:diagnostic' && d.nesting === 0 && !d.file && typeof d.message === 'string' && /^tests \d+$/.test(d.message)) {
      summed = true;
    }
  }
  end(false);
}
`;

const NODE_TEST_INVOCATION = /(^|[\s;&|(])((?:\S*\/)?node)((?:\s+-\S+)*?\s+--test)(?=\s|$)/;

/**
 * Adds `--require=<guard>` to the first `node ... --test` invocation of a shell command, right
 * after `node`; undefined when the command runs no `node --test`.
 */
export function addNodeGuard(command: string, guardPath: string): string | undefined {
  if (!NODE_TEST_INVOCATION.test(command)) return undefined;
  return command.replace(
    NODE_TEST_INVOCATION,
    (_m, lead, node, rest) => `${lead}${node} --require=${guardPath}${rest}`,
  );
}

/** Where node's runner takes the probe: after `--test`, when the command names its reporters. */
export interface NodeProbePlan {
  /** The command with the probe's reporter and destination added. */
  command: string;
}

/**
 * Adds the probe's reporter to the first `node ... --test` invocation of a shell command that
 * names its reporters, right after `node` (so it is reporter number one), and gives the
 * command's own reporters an explicit `stdout` destination when it names none (node pairs
 * reporters with destinations by position). Undefined when the command runs no `node --test`,
 * names no reporter, or names some destinations but not all (see the module comment).
 */
export function addNodeProbe(
  command: string,
  reporterPath: string,
  destination: string,
): NodeProbePlan | undefined {
  const invocation = NODE_TEST_INVOCATION;
  if (!invocation.test(command)) return undefined;
  const destinations = (command.match(/--test-reporter-destination(?:=|\s+)\S+/g) ?? []).length;
  const reporters = (command.match(/--test-reporter(?:=|\s+)\S+/g) ?? []).length;
  if (reporters === 0 || (destinations !== 0 && destinations !== reporters)) return undefined;
  const fill = destinations === 0 ? ' --test-reporter-destination=stdout'.repeat(reporters) : '';
  const ours = ` --test-reporter=${reporterPath} --test-reporter-destination=${destination}${fill}`;
  return { command: command.replace(invocation, (_m, lead, node, rest) => `${lead}${node}${ours}${rest}`) };
}
