/** Labels berth puts on every container, network and image it creates, so `berth clean` can find them. */
import { ownerId } from '../../util/owner.ts';

export const LABELS = {
  /** Present on everything berth made. */
  managed: 'dev.berth.managed',
  /** The job id. */
  job: 'dev.berth.job',
  /** The trial name (containers, networks). */
  trial: 'dev.berth.trial',
  /** The task name (containers). */
  task: 'dev.berth.task',
  /** The compose service a sidecar container runs. */
  service: 'dev.berth.service',
  /** Content hash of a built image's context. */
  contextHash: 'dev.berth.context-hash',
  /**
   * The berth process that made a container or network (src/util/owner.ts): what a dead owner
   * left is removed by the next run and by `berth clean`, never what a live one holds. Cached
   * images, shared between jobs, carry none.
   */
  owner: 'dev.berth.owner',
} as const;

/** The labels of a container or network made for `jobId` by this process: managed, job, owner. */
export function ownedLabels(jobId: string): Record<string, string> {
  return { [LABELS.managed]: '1', [LABELS.job]: jobId, [LABELS.owner]: ownerId() };
}
