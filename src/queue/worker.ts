/**
 * `berth worker`: takes trial specs from the queue (BullMQ workers, one per environment kind)
 * and runs each with the trial engine, under its own root folder:
 *
 * ```
 * <root>/worker-id      the worker's id (kept across restarts of this root)
 * <root>/.berth.lock    one worker per root
 * <root>/blobs/<sha>    blobs fetched from the queue (the cache)
 * <root>/content/<sha>  each blob unpacked once (task folders, predictions files)
 * <root>/trials/<id>    trials running now (removed once their folder is on the queue)
 * <root>/tmp/           local environments
 * ```
 *
 * A worker that starts on a root an earlier life left (killed) removes that life's trial
 * folders and environments first. Delivery is at least once: BullMQ moves the trial of a
 * worker that stopped renewing its lock (killed, frozen) back to the queue, and its late
 * completion is refused by BullMQ (the lock is gone), so the submitter gets one outcome.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { tarPath } from '../environments/docker/tar.ts';
import { lockJobDir } from '../jobs/lock.ts';
import { modelEndpointFor } from '../models/access.ts';
import { Credentials } from '../models/credentials.ts';
import { ModelGateway } from '../models/gateway.ts';
import { PriceTable } from '../models/pricing.ts';
import { type ModelTarget, resolveModel } from '../models/providers.ts';
import { type RunTrialOptions, runTrial } from '../trials/engine.ts';
import type { BerthEvent } from '../trials/events.ts';
import { providersFor, runtimeFor } from '../trials/runtime.ts';
import type { TrialSpec } from '../trials/spec.ts';
import { reclaimLeftovers } from '../util/leftovers.ts';
import { defaultOwnerId, setOwnerId } from '../util/owner.ts';
import { BlobCache, BlobStore, BlobTooLargeError, DEFAULT_MAX_BLOB_BYTES } from './blobs.ts';
import { connectRedis, QUEUE_PREFIX, type QueueAddress, queueName, redisOptions } from './connection.ts';
import { materializeSpec } from './content.ts';
import {
  CANCEL_CHANNEL,
  HEARTBEAT_SEC,
  HEARTBEAT_TTL_SEC,
  heartbeatKey,
  KEEP_FINISHED_SEC,
  type QueuedTrial,
  type TrialOutcome,
  type WorkerBeat,
} from './protocol.ts';

export interface WorkerOptions {
  address: QueueAddress;
  /** The worker's own folder (see the module comment). */
  root: string;
  /** Trials at once (per environment kind). */
  concurrency: number;
  /** Environment kinds taken: `local`, `docker`. */
  envs: string[];
  /** Cap of one blob sent back (a trial folder), in bytes. */
  maxBlobBytes?: number;
  /**
   * Seconds a trial's lock lasts without renewal (BullMQ's `lockDuration`; renewed every half):
   * a worker silent this long has its trial given to another worker. Default 30.
   */
  lockSec?: number;
  /**
   * Keys for the trials' models (`--env-file`; default this process's environment): a trial
   * that calls a model does so through this worker's own model gateway (docs/scale-out.md).
   */
  envFile?: string;
  /** The OpenAI-compatible server of trials' models (`--model-base-url`), as on `berth run`. */
  modelBaseUrl?: string;
  /** Lines for the operator (start, each trial, clean-up). */
  log?: (line: string) => void;
}

/** A running worker. */
export interface RunningWorker {
  id: string;
  /**
   * Stops taking trials, lets running ones finish, and disconnects. (A worker that exits
   * without it has its running trials given to other workers once their locks expire.)
   */
  close(): Promise<void>;
}

/** Removes what an earlier life of this root left: trial folders and local environments. */
async function cleanEarlierLife(root: string, log: (line: string) => void): Promise<void> {
  for (const dir of ['trials', 'tmp']) {
    const names = await readdir(join(root, dir)).catch(() => [] as string[]);
    for (const name of names) await rm(join(root, dir, name), { recursive: true, force: true });
    if (names.length > 0)
      log(`removed ${names.length} folder(s) an earlier run of this worker left in ${dir}/`);
  }
}

/** Removes what dead berth processes of this host left: temp folders, and the providers' containers and networks. */
async function reclaimDeadOwners(envs: string[], log: (line: string) => void): Promise<void> {
  try {
    const { folders } = await reclaimLeftovers();
    const providers = providersFor({ environment: {}, limits: {}, timeouts: { multiplier: 1 } });
    let resources = 0;
    for (const provider of providers)
      if (envs.includes(provider.kind)) resources += (await provider.reclaim?.()) ?? 0;
    if (folders.length + resources > 0)
      log(
        `removed ${folders.length} folder(s) and ${resources} Docker resource(s) that stopped berth processes left`,
      );
  } catch (error) {
    log(`could not remove what an earlier run left: ${(error as Error).message}`);
  }
}

/** The worker's id: kept in `<root>/worker-id`, made once (`<host>-<random>`). */
async function workerIdOf(root: string): Promise<{ id: string; restarted: boolean }> {
  const file = join(root, 'worker-id');
  const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (/^[A-Za-z0-9._-]{1,100}$/.test(kept)) return { id: kept, restarted: true };
  const host =
    hostname()
      .replace(/[^A-Za-z0-9.-]/g, '-')
      .slice(0, 40) || 'host';
  const id = `${host}-${randomBytes(4).toString('hex')}`;
  await writeFile(file, `${id}\n`);
  return { id, restarted: false };
}

/**
 * Starts a worker.
 * @throws UsageError when the queue cannot be reached or another worker uses the root.
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const log = options.log ?? (() => {});
  const root = resolve(options.root);
  const release = await lockJobDir(
    root,
    'worker',
    (pid) =>
      `the worker root ${root} is in use by another berth worker (pid ${pid}); give each worker its own --root`,
  );
  let redis: Redis | undefined;
  let subscriber: Redis | undefined;
  try {
    redis = await connectRedis(options.address);
    const { id, restarted } = await workerIdOf(root);
    // Everything this worker makes (containers, networks, temp folders) is labelled with its id
    // (src/util/owner.ts); what dead berth processes of this host left is removed now: the
    // earlier life of this worker (killed) among them.
    setOwnerId(`${defaultOwnerId()}/${id}`);
    if (restarted) await cleanEarlierLife(root, log);
    await reclaimDeadOwners(options.envs, log);
    const store = new BlobStore(redis, options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES);
    const cache = new BlobCache(store, join(root, 'blobs'));
    const running: Record<string, string> = {};
    const models = new WorkerModels(id, options.envFile, options.modelBaseUrl);
    const startedAt = new Date().toISOString();
    const beat = async () => {
      const body: WorkerBeat = {
        id,
        host: hostname(),
        pid: process.pid,
        started_at: startedAt,
        envs: options.envs,
        concurrency: options.concurrency,
        running,
      };
      await redis?.set(heartbeatKey(id), JSON.stringify(body), 'EX', HEARTBEAT_TTL_SEC).catch(() => {});
    };
    await beat();
    const heart = setInterval(() => void beat(), HEARTBEAT_SEC * 1000);
    heart.unref();

    const processor = async (job: Job<QueuedTrial, TrialOutcome>, _token?: string, signal?: AbortSignal) => {
      const jobId = job.id as string;
      let spec: TrialSpec;
      try {
        spec = await materializeSpec(job.data.spec, cache, join(root, 'content'));
      } catch (error) {
        // A blob the queue lost will not come back by retrying.
        throw new UnrecoverableError(`the trial's content could not be fetched: ${(error as Error).message}`);
      }
      spec = { ...spec, environment: { ...spec.environment, tmpRoot: join(root, 'tmp') } };
      // The task travels inline (its checksum is the submitter's, over its own paths).
      if (spec.task.load.kind !== 'inline')
        throw new UnrecoverableError('a queued trial carries its task inline');
      const task = spec.task.load.task;
      const trialDir = join(root, 'trials', `${jobId}-${job.attemptsStarted}`);
      running[jobId] = spec.trial.name;
      void beat();
      log(`${spec.job.name}/${spec.trial.name}: started (attempt ${job.attemptsStarted})`);
      // Events go back in order as the job's progress; the outcome waits for the last one.
      let sent: Promise<unknown> = Promise.resolve();
      const emit = (event: BerthEvent) => {
        sent = sent.then(() => job.updateProgress(event as unknown as object)).catch(() => {});
      };
      try {
        await rm(trialDir, { recursive: true, force: true });
        const withModel = job.data.model ? await models.forTrial(spec, job.data.model) : {};
        const result = await runTrial(spec, emit, {
          trialDir,
          task,
          ...withModel,
          ...(signal ? { signal } : {}),
        });
        await sent;
        const tar = await tarPath(trialDir, 'trial', { mtime: 0 });
        let folder: string;
        try {
          folder = await store.put(tar, `the folder of trial ${spec.trial.name}`);
        } catch (error) {
          if (error instanceof BlobTooLargeError) throw new UnrecoverableError(error.message);
          throw error;
        }
        log(`${spec.job.name}/${spec.trial.name}: ${result.berth.status}`);
        return { worker: id, folder, bytes: tar.length, status: result.berth.status };
      } finally {
        delete running[jobId];
        void beat();
        await rm(trialDir, { recursive: true, force: true }).catch(() => {});
      }
    };

    const connection = redisOptions(options.address);
    const lockDuration = (options.lockSec ?? 30) * 1000;
    const workers = options.envs.map(
      (kind) =>
        new Worker<QueuedTrial, TrialOutcome>(queueName(kind), processor, {
          connection,
          prefix: QUEUE_PREFIX,
          name: id,
          concurrency: options.concurrency,
          lockDuration,
          stalledInterval: lockDuration,
          // A trial whose worker died is given to another worker up to this many times.
          maxStalledCount: 3,
          removeOnComplete: { age: KEEP_FINISHED_SEC },
          removeOnFail: { age: KEEP_FINISHED_SEC },
        }),
    );
    for (const w of workers) w.on('error', (error) => log(`queue error: ${error.message}`));

    subscriber = redis.duplicate();
    await subscriber.subscribe(CANCEL_CHANNEL);
    subscriber.on('message', (_channel: string, jobId: string) => {
      for (const w of workers)
        if (w.cancelJob(jobId, 'cancelled by the submitter'))
          log(`${running[jobId] ?? jobId}: cancelled by the submitter`);
    });
    log(
      `worker ${id} on ${options.envs.map(queueName).join(', ')}, ${options.concurrency} at a time, root ${root}`,
    );
    const ownRedis = redis;
    const ownSubscriber = subscriber;
    return {
      id,
      async close() {
        clearInterval(heart);
        await models.stop();
        await Promise.all(workers.map((w) => w.close()));
        await ownRedis.del(heartbeatKey(id)).catch(() => {});
        ownSubscriber.disconnect();
        ownRedis.disconnect();
        await release();
      },
    };
  } catch (error) {
    subscriber?.disconnect();
    redis?.disconnect();
    await release();
    throw error;
  }
}

/**
 * The worker's model gateway, started with the first trial that calls a model: the keys are
 * the worker's (its environment or `--env-file`), never on the queue.
 */
class WorkerModels {
  private gateway: Promise<ModelGateway> | undefined;
  private credentials: Credentials | undefined;

  constructor(
    private readonly workerId: string,
    private readonly envFile: string | undefined,
    private readonly modelBaseUrl: string | undefined,
  ) {}

  /** The runtime and model options of a trial that calls `model`. */
  async forTrial(
    spec: TrialSpec,
    model: NonNullable<QueuedTrial['model']>,
  ): Promise<Pick<RunTrialOptions, 'runtime' | 'models'>> {
    this.credentials ??= Credentials.load(this.envFile);
    // The worker decides where its keys go: the model is resolved here (the provider's URL, the
    // worker's own --model-base-url or its environment's), never taken from the queue, which
    // could otherwise send this worker's key to any server.
    let target: ModelTarget;
    try {
      target = resolveModel(model.target.id, this.credentials.variables(), this.modelBaseUrl);
    } catch (error) {
      throw new UnrecoverableError(`worker ${this.workerId}: ${(error as Error).message}`);
    }
    if (target.baseUrl !== model.target.baseUrl)
      throw new UnrecoverableError(
        `worker ${this.workerId} calls ${target.id} at ${target.baseUrl}, the job asks for ${model.target.baseUrl}: ` +
          'start the worker with --model-base-url for that server (a worker never sends its key where the queue says)',
      );
    if (target.needsKey && !this.credentials.keyFor(target))
      throw new UnrecoverableError(
        `worker ${this.workerId} has no key for ${target.provider}: set ${target.keyVar ?? 'its key variable'} where the worker runs, or start it with --env-file FILE`,
      );
    const credentials = this.credentials;
    this.gateway ??= ModelGateway.start({ credentials, prices: PriceTable.load() });
    const gateway = await this.gateway;
    return {
      runtime: await runtimeFor({
        ...spec,
        agent: {
          ...spec.agent,
          options: {
            ...spec.agent.options,
            model: target.id,
            modelTarget: target,
            modelEndpoint: modelEndpointFor,
          },
        },
      }),
      models: { gateway, target, ...(model.limits ? { limits: model.limits } : {}) },
    };
  }

  async stop(): Promise<void> {
    const gateway = await this.gateway?.catch(() => undefined);
    await gateway?.stop();
  }
}
