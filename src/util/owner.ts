/**
 * Who owns what berth leaves on the machine while it runs (containers, networks, temp
 * folders, tmpfs mounts, egress proxies): one owner id per berth process,
 * `<host>/berth-<pid>-<start time>` (the start time, in clock ticks since boot, tells a reused
 * pid from the process that had it: src/sandbox/cgroup.ts `ownerTag`). Docker resources carry
 * it as the label `dev.berth.owner`; temp folders are recorded under it
 * (src/util/leftovers.ts). What a dead owner left is removed by the next `berth run` and by
 * `berth clean`; what a live owner holds never is.
 *
 * A process that runs trials for someone else (a queue worker, issue 16) may name itself:
 * `setOwnerId(\`${defaultOwnerId()}/worker-3\`)`. Only the leading `<host>/berth-<pid>-<start>`
 * decides liveness; an id of another form is never taken for dead.
 */
import { hostname } from 'node:os';
import { ownerTag, ownerAlive as tagAlive } from '../sandbox/cgroup.ts';

let current: string | undefined;

/** This process's own owner id (`<host>/berth-<pid>-<start>`, or `<host>/pid-<pid>` without /proc). */
export function defaultOwnerId(): string {
  return `${hostname()}/${ownerTag() ?? `pid-${process.pid}`}`;
}

/** The owner id berth labels and records everything with (default: `defaultOwnerId()`). */
export function ownerId(): string {
  current ??= defaultOwnerId();
  return current;
}

/** Names this process's owner id (a worker's own id); labels made from now on carry it. */
export function setOwnerId(id: string): void {
  if (id.trim() === '' || /[\s,=]/.test(id))
    throw new Error(`owner id ${JSON.stringify(id)}: no spaces, commas or '='`);
  current = id;
}

/**
 * Whether the owner `id` may still be running. False only when it names a process of this
 * host (`<host>/berth-<pid>-<start>[/...]`) that is gone or whose pid now belongs to a process
 * started at another time; an owner on another host, or an id of another form, counts as alive.
 */
export function ownerAlive(id: string): boolean {
  const [host, tag] = id.split('/');
  if (host !== hostname() || !tag || !/^berth-\d+-\d+$/.test(tag)) return true;
  return tagAlive(tag);
}
