/**
 * Starting and pausing berth's containers (the trial's and its sidecars): one way each.
 */
import type Docker from 'dockerode';
import type { ContainerEtcFiles } from './etc-files.ts';

/**
 * Starts `container` with berth's `/etc` files (etc-files.ts) written before the start (what it
 * starts may read them) and again after it, with the addresses the engine gave it.
 */
export async function startContainer(container: Docker.Container, etc: ContainerEtcFiles): Promise<void> {
  await etc.refresh(container);
  await container.start();
  await etc.refresh(container);
}

/**
 * Pauses `container` (the engine's cgroup freezer, which no process of it can leave or undo).
 * One paused already, not running (409) or removed (404) is left as it is: nothing of it runs
 * either way.
 */
export async function pauseContainer(container: Docker.Container): Promise<void> {
  try {
    await container.pause();
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== 409 && status !== 404) throw error;
  }
}
