/**
 * A route from a container to one host URL (berth's model gateway, on 127.0.0.1), whatever
 * the container's network policy: the container joins a job's *internal* Docker network
 * (`berth-models-<job>`: no route out of the machine), and berth relays TCP from that
 * network's gateway address on the host to the target. The agent thus reaches the model
 * gateway and nothing else, in `no-network` tasks too; the route is taken down after the
 * agent (the verifier never has it).
 */
import { createConnection, createServer, type Server } from 'node:net';
import type Docker from 'dockerode';
import { LABELS } from './labels.ts';

/** The internal network of a job's model routes. */
export function modelNetworkName(jobId: string): string {
  return `berth-models-${jobId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 48)}`;
}

/** One relay per (host address, target), kept for the process's life (unref'd). */
const relays = new Map<string, Promise<number>>();

function relay(listenHost: string, target: URL): Promise<number> {
  const key = `${listenHost}\0${target.host}`;
  let port = relays.get(key);
  if (!port) {
    port = new Promise<number>((resolve, reject) => {
      const server: Server = createServer((socket) => {
        const upstream = createConnection({
          host: target.hostname.replace(/^\[|\]$/g, ''),
          port: Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
        });
        socket.pipe(upstream).pipe(socket);
        const end = () => {
          socket.destroy();
          upstream.destroy();
        };
        socket.on('error', end);
        upstream.on('error', end);
      });
      server.once('error', reject);
      server.listen(0, listenHost, () => {
        server.unref();
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
    relays.set(key, port);
    port.catch(() => relays.delete(key));
  }
  return port;
}

/** The job's internal network (made once; concurrent trials share it) and its gateway address. */
async function modelNetwork(docker: Docker, jobId: string): Promise<{ name: string; hostAddress: string }> {
  const name = modelNetworkName(jobId);
  const inspect = async () => {
    const info = (await docker.getNetwork(name).inspect()) as {
      IPAM?: { Config?: Array<{ Gateway?: string }> };
    };
    const hostAddress = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
    if (!hostAddress) throw new Error(`the network ${name} has no gateway address`);
    return { name, hostAddress };
  };
  try {
    return await inspect();
  } catch {
    await docker
      .createNetwork({
        Name: name,
        Internal: true,
        CheckDuplicate: true,
        Labels: { [LABELS.managed]: '1', [LABELS.job]: jobId },
      })
      .catch(() => undefined); // made by a concurrent trial
    return inspect();
  }
}

/**
 * Makes `target` (an `http://127.0.0.1:PORT` URL) reachable from the container: returns the
 * origin to use inside it and a `close` that disconnects the container again.
 */
export async function connectModelRoute(
  docker: Docker,
  containerId: string,
  jobId: string,
  target: string,
): Promise<{ origin: string; close(): Promise<void> }> {
  const url = new URL(target);
  const network = await modelNetwork(docker, jobId);
  const port = await relay(network.hostAddress, url);
  await docker.getNetwork(network.name).connect({ Container: containerId });
  return {
    origin: `http://${network.hostAddress}:${port}`,
    close: async () => {
      await docker
        .getNetwork(network.name)
        .disconnect({ Container: containerId, Force: true })
        .catch(() => undefined);
    },
  };
}
