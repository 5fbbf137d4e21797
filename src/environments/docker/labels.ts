/** Labels berth puts on every container, network and image it creates, so `berth clean` can find them. */
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
} as const;
