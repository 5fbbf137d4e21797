/** Removal of what berth left in the engine: containers and networks by label, cached images on request. */
import type Docker from 'dockerode';
import { LABELS } from './labels.ts';
import { TOOL_LAYER_REPO } from './tool-layer.ts';

export interface CleanOptions {
  /** Only what this job started. */
  job?: string;
  /** Also remove cached task images (`berth-cache/*`). */
  images?: boolean;
}

/** Removes berth's containers and networks (and cached images when asked); returns the counts. */
export async function cleanDocker(
  docker: Docker,
  options: CleanOptions = {},
): Promise<{ containers: number; networks: number; images: number }> {
  const label = options.job ? [`${LABELS.job}=${options.job}`] : [LABELS.managed];
  const containers = await docker.listContainers({ all: true, filters: { label } });
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined),
    ),
  );
  const networks = await docker.listNetworks({ filters: { label } });
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
