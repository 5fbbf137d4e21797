/**
 * Connection to the Docker engine, with API-version negotiation.
 *
 * dockerode sends unversioned paths unless told a version, and the engine then
 * answers at its own newest API. Pinning a version breaks either old engines
 * (Debian's docker.io 20.10 serves API 1.41 at most: "client version 1.47 is too
 * new") or new ones (Docker 29 serves 1.44 at least: "client version 1.41 is too
 * old"). So berth asks the engine first (unversioned `GET /version`) and uses
 * `min(NEWEST_TESTED_API, ApiVersion)`, never below `MinAPIVersion`, as the
 * docker CLI does.
 */
import type Docker from 'dockerode';
import { PrerequisiteError } from '../../errors.ts';

/** The newest Engine API version berth is written against (Docker 27). */
export const NEWEST_TESTED_API = '1.47';

/** What the engine says about itself at the unversioned `GET /version`. */
export interface EngineVersion {
  Version?: string;
  ApiVersion: string;
  MinAPIVersion?: string;
}

/** Compares dotted API versions numerically (`1.9` < `1.10`). */
export function compareApiVersions(a: string, b: string): number {
  const pa = a.replace(/^v/, '').split('.').map(Number);
  const pb = b.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Picks the API version to speak: the lower of ours and the engine's newest,
 * raised to the engine's minimum when ours is older than it.
 */
export function chooseApiVersion(engine: EngineVersion, newestTested = NEWEST_TESTED_API): string {
  let chosen = compareApiVersions(newestTested, engine.ApiVersion) <= 0 ? newestTested : engine.ApiVersion;
  if (engine.MinAPIVersion && compareApiVersions(chosen, engine.MinAPIVersion) < 0)
    chosen = engine.MinAPIVersion;
  return chosen.replace(/^v/, '');
}

/** Options of `connectDocker`: dockerode's connection options (socketPath, host, port...). */
export type ConnectOptions = Omit<Docker.DockerOptions, 'version'> & { newestTested?: string };

export interface DockerConnection {
  docker: Docker;
  /** The API version in use, e.g. `1.41`. */
  apiVersion: string;
  engine: EngineVersion;
}

const cache = new Map<string, Promise<DockerConnection>>();

/**
 * Connects to the engine named by `DOCKER_HOST` (or the default socket) and
 * negotiates the API version. The connection is cached per options.
 * @throws PrerequisiteError when no engine answers.
 */
export function connectDocker(options: ConnectOptions = {}): Promise<DockerConnection> {
  const key = JSON.stringify(options);
  let connection = cache.get(key);
  if (!connection) {
    connection = negotiate(options);
    cache.set(key, connection);
    connection.catch(() => cache.delete(key));
  }
  return connection;
}

async function negotiate(options: ConnectOptions): Promise<DockerConnection> {
  const { newestTested, ...dockerOptions } = options;
  // Loaded on the first connection, not at start-up: dockerode brings gRPC, protobufjs and ssh2
  // (about 150 modules, 0.4 CPU-seconds of every `berth` start that uses no engine).
  const { default: Dockerode } = await import('dockerode');
  const probe = new Dockerode(dockerOptions);
  let engine: EngineVersion;
  try {
    engine = (await probe.version()) as unknown as EngineVersion;
  } catch (error) {
    throw new PrerequisiteError(
      `no Docker engine answers (${(error as Error).message}); start dockerd (for example \`bash .ci/setup-docker.sh\`) or set DOCKER_HOST`,
    );
  }
  if (!engine || typeof engine.ApiVersion !== 'string') {
    throw new PrerequisiteError('the Docker engine did not report its API version at GET /version');
  }
  const apiVersion = chooseApiVersion(engine, newestTested);
  const docker = new Dockerode({ ...dockerOptions, version: `v${apiVersion}` });
  return { docker, apiVersion, engine };
}

/** True when an engine answers (used by tests to skip without one). */
export async function dockerAvailable(): Promise<boolean> {
  try {
    await connectDocker();
    return true;
  } catch {
    return false;
  }
}
