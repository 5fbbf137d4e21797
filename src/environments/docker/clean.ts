/**
 * Removal of what berth left in the engine: containers and networks by label (never those of
 * a berth process still running: label `dev.berth.owner`, src/util/owner.ts), cached images
 * on request.
 */
import type Docker from 'dockerode';
import { ownerAlive } from '../../util/owner.ts';
import { LABELS } from './labels.ts';
import { TOOL_LAYER_REPO } from './tool-layer.ts';

export interface CleanOptions {
  /** Only what this job started. */
  job?: string;
  /** Also remove cached task images (`berth-cache/*`). */
  images?: boolean;
  /**
   * Also what carries no owner label (made by a berth from before owners were recorded, so
   * possibly by a process still running). Default: only when a job is named (`berth clean
   * --job`); `berth clean` alone and the clean-up at a run's start leave those alone.
   */
  unowned?: boolean;
}

/** Whether a resource with these labels may go: its owner is dead (or it has none and `unowned`). */
function removable(labels: Record<string, string> | undefined, unowned: boolean): boolean {
  const owner = labels?.[LABELS.owner];
  return owner === undefined ? unowned : !ownerAlive(owner);
}

/** True when the engine has a container or network labelled with `job` (the job's name). */
export async function dockerHasJob(docker: Docker, job: string): Promise<boolean> {
  const label = [`${LABELS.job}=${job}`];
  if ((await docker.listContainers({ all: true, filters: { label } })).length > 0) return true;
  return (await docker.listNetworks({ filters: { label } })).length > 0;
}

/**
 * Removes berth's containers and networks whose owner is no longer running (and cached images
 * when asked); returns the counts. A live berth process's containers and networks are spared.
 */
export async function cleanDocker(
  docker: Docker,
  options: CleanOptions = {},
): Promise<{ containers: number; networks: number; images: number }> {
  const label = options.job ? [`${LABELS.job}=${options.job}`] : [LABELS.managed];
  const unowned = options.unowned ?? options.job !== undefined;
  const containers = (await docker.listContainers({ all: true, filters: { label } })).filter((c) =>
    removable(c.Labels, unowned),
  );
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined),
    ),
  );
  const networks = (await docker.listNetworks({ filters: { label } })).filter((n) =>
    removable(n.Labels, unowned),
  );
  let nets = 0;
  for (const n of networks) {
    try {
      await docker.getNetwork(n.Id).remove();
      nets++;
    } catch {
      // still in use by something berth did not start
    }
  }
  let images = 0;
  if (options.images) {
    const list = await docker.listImages({ filters: { label: [LABELS.managed] } });
    for (const image of list) {
      if (!(image.RepoTags ?? []).some((t) => t.startsWith('berth-cache/'))) continue;
      try {
        await docker.getImage(image.Id).remove({ force: true });
        images++;
      } catch {
        // used by a container
      }
    }
  }
  return { containers: containers.length, networks: nets, images };
}

/** Removes the installed agents' image layers (`berth-agent/*`); returns how many went. */
export async function removeAgentLayers(docker: Docker): Promise<number> {
  let removed = 0;
  for (const image of await docker.listImages({ filters: { label: [LABELS.managed] } })) {
    if (!(image.RepoTags ?? []).some((t) => t.startsWith(`${TOOL_LAYER_REPO}/`))) continue;
    try {
      await docker.getImage(image.Id).remove({ force: true });
      removed++;
    } catch {
      // used by a running container
    }
  }
  return removed;
}
