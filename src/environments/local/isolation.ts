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

const PREFIX: Record<IsolationMethod, string[]> = {
  bwrap: ['bwrap', '--dev-bind', '/', '/', '--unshare-net', '--die-with-parent', '--'],
  unshare: ['unshare', '--net', '--'],
  'unshare-user': ['unshare', '--map-root-user', '--net', '--'],
};

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

/** Finds the first isolation method that works on this machine (cached). `BERTH_NO_ISOLATION=1` disables it. */
export function probeIsolation(): Promise<IsolationProbe> {
  cached ??= (async () => {
    const notes: string[] = [];
    if (process.env.BERTH_NO_ISOLATION === '1') return { notes: ['disabled by BERTH_NO_ISOLATION=1'] };
    for (const method of ['bwrap', 'unshare', 'unshare-user'] as const) {
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
