/**
 * `berth run --queue`: the job runs as it does locally (plan, resume, job files, reporters),
 * except that each trial is sent to the queue instead of run here (`QueueSubmitter.runner`,
 * the job's `TrialRunner`): its spec goes on the queue under its idempotency key, its events
 * come back as they happen, and its folder comes back whole when it completes.
 *
 * Nothing twice: the BullMQ job id is `trialKey(spec)`, so re-submitting a trial (a resumed
 * job) finds the job already queued, running or finished rather than adding another; a finished
 * one is taken as it is. A trial that was cancelled or failed is queued again.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { TrialRunner } from '../jobs/job.ts';
import type { TrialLimits as ModelTrialLimits } from '../models/gateway.ts';
import { taskChecksum } from '../tasks/checksum.ts';
import { type BerthEvent, EVENTS_SCHEMA_VERSION, eventTime } from '../trials/events.ts';
import type { TrialResult } from '../trials/result.ts';
import { trialKey } from '../trials/spec.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { BlobStore, DEFAULT_MAX_BLOB_BYTES, unpackBlob } from './blobs.ts';
import { connectRedis, QUEUE_PREFIX, type QueueAddress, queueName, redisOptions } from './connection.ts';
import { type PackedRoots, specForQueue } from './content.ts';
import { CANCEL_CHANNEL, KEEP_FINISHED_SEC, type QueuedTrial, type TrialOutcome } from './protocol.ts';

/** Seconds the submitter waits for a running trial to come back cancelled after Ctrl-C. */
export const CANCEL_WAIT_SEC = 60;

export interface SubmitterOptions {
  address: QueueAddress;
  /** The dataset the job's tasks come from: host paths beneath it travel as blobs. */
  datasetPath: string;
  /** Cap of one blob, in bytes. */
  maxBlobBytes?: number;
  /** Per-trial model limits (`--model-max-calls`...), applied by the workers' gateways. */
  modelLimits?: ModelTrialLimits;
}

interface Lane {
  queue: Queue<QueuedTrial, TrialOutcome>;
  events: QueueEvents;
}

/** The submitter's side of the queue, for one job. */
export class QueueSubmitter {
  private readonly lanes = new Map<string, Promise<Lane>>();
  private readonly listeners = new Map<string, (event: BerthEvent) => void>();
  private readonly packed: PackedRoots = new Map();
  private readonly store: BlobStore;

  private constructor(
    private readonly options: SubmitterOptions,
    private readonly redis: Redis,
  ) {
    this.store = new BlobStore(redis, options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES);
  }

  /** @throws UsageError when the queue cannot be reached. */
  static async open(options: SubmitterOptions): Promise<QueueSubmitter> {
    return new QueueSubmitter(options, await connectRedis(options.address));
  }

  /** The queue and its event stream of environment kind `kind`, ready before the first add. */
  private lane(kind: string): Promise<Lane> {
    let lane = this.lanes.get(kind);
    if (!lane) {
      lane = (async () => {
        const connection = redisOptions(this.options.address);
        const queue = new Queue<QueuedTrial, TrialOutcome>(queueName(kind), {
          connection,
          prefix: QUEUE_PREFIX,
        });
        const events = new QueueEvents(queueName(kind), { connection, prefix: QUEUE_PREFIX });
        events.on('progress', ({ jobId, data }) =>
          this.listeners.get(jobId)?.(data as unknown as BerthEvent),
        );
        events.on('stalled', ({ jobId }) => this.listeners.get(jobId)?.(STALLED));
        await events.waitUntilReady();
        return { queue, events };
      })();
      this.lanes.set(kind, lane);
    }
    return lane;
  }

  /** The job's `TrialRunner`: a trial sent to the workers and its folder written from what comes back. */
  readonly runner: TrialRunner = async ({ spec, trial, trialDir, emit, signal }) => {
    const queued = await specForQueue(spec, trial.task, this.options.datasetPath, this.store, this.packed);
    const key = trialKey(queued);
    const { queue, events } = await this.lane(trial.task.environment.kind);
    const notice = (message: string) =>
      emit({
        type: 'notice',
        v: EVENTS_SCHEMA_VERSION,
        time: eventTime(),
        job: spec.job.name,
        trial: spec.trial.name,
        level: 'warning',
        message,
      });
    this.listeners.set(key, (event) =>
      event === STALLED
        ? notice(`${spec.trial.name}: its worker stopped answering; the trial goes back to the queue`)
        : emit(event),
    );
    try {
      const model = trial.model
        ? { target: trial.model, ...(this.options.modelLimits ? { limits: this.options.modelLimits } : {}) }
        : undefined;
      const job = await this.submit(queue, key, { spec: queued, ...(model ? { model } : {}) });
      const cancelled = new Promise<'not-started'>((resolve) => {
        if (!signal) return;
        const onAbort = () => void this.cancel(job).then((started) => started || resolve('not-started'));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      const finished = job.waitUntilFinished(events) as Promise<TrialOutcome>;
      const timeout = new Promise<'timeout'>((resolve) => {
        signal?.addEventListener(
          'abort',
          () => setTimeout(() => resolve('timeout'), CANCEL_WAIT_SEC * 1000).unref(),
          { once: true },
        );
      });
      const outcome = await Promise.race([finished, cancelled, timeout]);
      if (outcome === 'not-started') return undefined;
      if (outcome === 'timeout') {
        notice(
          `${spec.trial.name}: no answer from its worker ${CANCEL_WAIT_SEC} s after cancelling; not recorded`,
        );
        return undefined;
      }
      return await this.writeTrialFolder(outcome, trial.task, trialDir);
    } finally {
      this.listeners.delete(key);
    }
  };

  /**
   * The trial's BullMQ job: the one already under its key when there is one (queued, running,
   * or finished and usable), else a new one.
   */
  private async submit(queue: Queue<QueuedTrial, TrialOutcome>, key: string, data: QueuedTrial) {
    const existing = await Job.fromId<QueuedTrial, TrialOutcome>(queue, key);
    if (existing) {
      const state = await existing.getState();
      if (state === 'failed') {
        await existing.retry('failed');
        return existing;
      }
      if (!(state === 'completed' && existing.returnvalue?.status === 'cancelled')) return existing;
      await existing.remove();
    }
    return queue.add(data.spec.trial.name, data, {
      jobId: key,
      // A processor error (not a trial's failure: the engine records those) is retried.
      attempts: 3,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: { age: KEEP_FINISHED_SEC },
      removeOnFail: { age: KEEP_FINISHED_SEC },
    });
  }

  /**
   * Cancels a trial: removed from the queue when no worker took it yet (false), else its
   * worker is asked to stop it (true: it comes back as `cancelled`).
   */
  private async cancel(job: Job<QueuedTrial, TrialOutcome>): Promise<boolean> {
    const state = await job.getState();
    if (state !== 'active' && state !== 'completed' && state !== 'failed') {
      try {
        await job.remove();
        return false;
      } catch {
        // Taken by a worker meanwhile (it holds the lock): ask it to stop.
      }
    }
    await this.redis.publish(CANCEL_CHANNEL, job.id as string);
    return true;
  }

  /**
   * Writes the trial folder that came back (extracted as data: no link followed, sizes capped)
   * and gives its result the submitter's view: its folder's URI, the task's checksum and origin.
   */
  private async writeTrialFolder(
    outcome: TrialOutcome,
    task: Parameters<typeof taskChecksum>[0],
    trialDir: string,
  ): Promise<TrialResult> {
    const bytes = await this.store.get(outcome.folder);
    await rm(trialDir, { recursive: true, force: true });
    await unpackBlob(bytes, trialDir);
    const resultFile = join(trialDir, 'result.json');
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as TrialResult;
    result.trial_uri = pathToFileURL(trialDir).href;
    result.task_checksum = taskChecksum(task);
    await writeJsonAtomic(resultFile, result);
    const configFile = join(trialDir, 'config.json');
    const config = JSON.parse(await readFile(configFile, 'utf8').catch(() => '{}')) as Record<
      string,
      unknown
    >;
    if ('task_origin' in config) await writeJsonAtomic(configFile, { ...config, task_origin: task.origin });
    return result;
  }

  async close(): Promise<void> {
    for (const lane of this.lanes.values()) {
      const { queue, events } = await lane.catch(() => ({ queue: undefined, events: undefined }));
      await events?.close();
      await queue?.close();
    }
    this.redis.disconnect();
  }
}

/** The marker of a stalled trial among its listener's events. */
const STALLED = { type: 'notice' } as unknown as BerthEvent;
