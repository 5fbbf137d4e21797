/**
 * Network isolation for untrusted commands on this machine: bubblewrap
 * (`bwrap --unshare-net`) when installed and allowed, else `unshare -n` (root)
 * or `unshare -rn` (an unprivileged user namespace). Probed once per process;
 * the result says which method works, or that none does.
 */
import { execa } from 'execa';

export type IsolationMethod = 'bwrap' | 'unshare' | 'unshare-user';

export interface IsolationProbe {
  /** The method that works here, or undefined when commands cannot be cut off the network. */
  method?: IsolationMethod;
  /** Why each method failed, for the record. */
  notes: string[];
}

// unshare leaves the loopback interface down in the new namespace (bwrap brings it up):
// bring it up, so tests that talk to a local server still work.
const LO_UP = ['sh', '-c', 'ip link set lo up 2>/dev/null || true; exec "$@"', 'berth-netns'];

const PREFIX: Record<IsolationMethod, string[]> = {
  bwrap: ['bwrap', '--dev-bind', '/', '/', '--unshare-net', '--die-with-parent', '--'],
  unshare: ['unshare', '--net', '--', ...LO_UP],
  'unshare-user': ['unshare', '--map-root-user', '--net', '--', ...LO_UP],
};

/** Every method berth knows, in the order `auto` tries them. */
export const ISOLATION_METHODS: readonly IsolationMethod[] = ['bwrap', 'unshare', 'unshare-user'];

const checked = new Map<IsolationMethod, Promise<string | undefined>>();

/** Why `method` does not isolate here, or undefined when it works (probed once per process). */
export function checkIsolationMethod(method: IsolationMethod): Promise<string | undefined> {
  let probe = checked.get(method);
  if (!probe) {
    probe = works(PREFIX[method]);
    checked.set(method, probe);
  }
  return probe;
}

let cached: Promise<IsolationProbe> | undefined;

async function works(argv: string[]): Promise<string | undefined> {
  // The probe checks the namespace really has no route out: only `lo` may exist.
  const result = await execa(argv[0] as string, [...argv.slice(1), 'cat', '/proc/net/dev'], {
    reject: false,
    timeout: 10_000,
  });
  if (result.exitCode !== 0)
    return (result.stderr || result.shortMessage || 'failed').toString().split('\n')[0];
  const interfaces = result.stdout
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim())
    .filter((name) => name && name !== 'lo');
  return interfaces.length === 0 ? undefined : `network interfaces still visible: ${interfaces.join(', ')}`;
}

/**
 * Finds the first isolation method that works on this machine (cached).
 * `BERTH_NO_ISOLATION=1` disables isolation; `BERTH_ISOLATION=bwrap|unshare|unshare-user`
 * asks for one method (none is used when it does not work here).
 */
export function probeIsolation(): Promise<IsolationProbe> {
  cached ??= (async () => {
    const notes: string[] = [];
    if (process.env.BERTH_NO_ISOLATION === '1') return { notes: ['disabled by BERTH_NO_ISOLATION=1'] };
    const wanted = process.env.BERTH_ISOLATION as IsolationMethod | undefined;
    const methods = wanted && ISOLATION_METHODS.includes(wanted) ? [wanted] : ISOLATION_METHODS;
    for (const method of methods) {
      const problem = await works(PREFIX[method]);
      if (problem === undefined) return { method, notes };
      notes.push(`${method}: ${problem}`);
    }
    return { notes };
  })();
  return cached;
}

/** The argv prefix that runs a command without network with `method`. */
export function isolationPrefix(method: IsolationMethod): string[] {
  return [...PREFIX[method]];
}
