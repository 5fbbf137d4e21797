/**
 * What travels over the trial queue (BullMQ jobs in Redis), both sides' view.
 *
 * - A BullMQ job is one trial: its id is the trial's idempotency key (`trialKey`), its data a
 *   `QueuedTrial` (the spec with blob references, no host path), on the queue of the task's
 *   environment kind (`queueName`).
 * - While it runs, every event of the trial goes back as the job's progress (BullMQ's
 *   `updateProgress`, read by the submitter's `QueueEvents`).
 * - It completes with a `TrialOutcome`: the trial folder as a blob.
 * - A submitter stopping its job publishes the BullMQ job id on `CANCEL_CHANNEL`; the worker
 *   running it aborts it (BullMQ's `Worker.cancelJob`) and completes it as `cancelled`.
 */
import type { TrialLimits as ModelTrialLimits } from '../models/gateway.ts';
import type { ModelTarget } from '../models/providers.ts';
import type { TrialSpec } from '../trials/spec.ts';
import { QUEUE_PREFIX } from './connection.ts';

export interface QueuedTrial {
  /** The spec with every host path written as a blob reference (src/queue/content.ts). */
  spec: TrialSpec;
  /**
   * The trial's model (`-m`), as data (provider, name, base URL, the key's variable name: never
   * a key), and its per-trial limits. The worker calls it through its own model gateway, with
   * the key from its own environment.
   */
  model?: { target: ModelTarget; limits?: ModelTrialLimits };
}

export interface TrialOutcome {
  /** Id of the worker that ran it. */
  worker: string;
  /** sha256 of the trial folder, a tar of it (`trial/...`) stored as a blob. */
  folder: string;
  /** Size of that tar, in bytes. */
  bytes: number;
  /** The trial's `berth.status`. */
  status: string;
}

/** Redis pub/sub channel of cancellations: messages are BullMQ job ids. */
export const CANCEL_CHANNEL = `${QUEUE_PREFIX}:cancel`;

/** Key of a worker's heartbeat (JSON `WorkerBeat`), expiring `HEARTBEAT_TTL_SEC` after the last beat. */
export function heartbeatKey(workerId: string): string {
  return `${QUEUE_PREFIX}:worker:${workerId}`;
}
export const HEARTBEAT_SEC = 5;
export const HEARTBEAT_TTL_SEC = 20;

export interface WorkerBeat {
  id: string;
  host: string;
  pid: number;
  started_at: string;
  /** Environment kinds it takes (queues it listens on). */
  envs: string[];
  concurrency: number;
  /** Trials it runs now: BullMQ job id -> trial name. */
  running: Record<string, string>;
}

/** How long finished BullMQ jobs (and so their outcomes) are kept, in seconds: 7 days, as blobs. */
export const KEEP_FINISHED_SEC = 7 * 24 * 3600;
