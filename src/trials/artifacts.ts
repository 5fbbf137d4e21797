/**
 * Harbor's artifacts (`src/harbor/trial/artifact_handler.py`): after the agent,
 * every configured path is copied out of the environment into
 * `<trial>/artifacts/` (a path lands under its base name, or its
 * `destination`), best effort, and `manifest.json` lists each with its status.
 * `/logs/artifacts` is the convention folder, always collected (it is a bind
 * mount of `<trial>/artifacts/`, so it is only recorded). A separate verifier
 * gets them back: the convention folder at its `/logs/artifacts`, each
 * configured path at its original place.
 */
import { cp, mkdir, readdir, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Environment } from '../environments/environment.ts';
import type { ArtifactSpec } from '../tasks/harbor/steps.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { shellQuote as q } from '../util/shell.ts';

export const ARTIFACTS_CONVENTION_DIR = '/logs/artifacts';

export interface ArtifactManifestEntry {
  source: string;
  destination: string;
  type: 'file' | 'directory';
  status: 'ok' | 'empty' | 'failed';
}

const isConvention = (p: string) => p.replace(/\/+$/, '') === ARTIFACTS_CONVENTION_DIR;

/** Host path (relative to the artifacts folder) of an artifact; '' for the convention folder. */
export function artifactHostPath(artifact: ArtifactSpec): string {
  if (isConvention(artifact.source)) {
    const d = artifact.destination ?? artifact.source;
    if (isConvention(d) || d === '.') return '';
  }
  const destination = artifact.destination ?? posix.basename(artifact.source.replace(/\/+$/, ''));
  const parts = destination.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  return parts.join('/');
}

async function nonEmptyDir(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).length > 0;
  } catch {
    return false;
  }
}

/**
 * Copies the artifacts out of `environment` into `hostDir` and writes `hostDir/manifest.json`.
 * Never throws for a missing artifact (status `failed`).
 */
export async function collectArtifacts(
  environment: Environment,
  hostDir: string,
  artifacts: ArtifactSpec[],
): Promise<ArtifactManifestEntry[]> {
  await mkdir(hostDir, { recursive: true });
  const entries: ArtifactManifestEntry[] = [];
  const list = artifacts.some((a) => isConvention(a.source))
    ? artifacts
    : [{ source: ARTIFACTS_CONVENTION_DIR, destination: ARTIFACTS_CONVENTION_DIR }, ...artifacts];
  for (const artifact of list) {
    const rel = artifactHostPath(artifact);
    const destination = rel ? `artifacts/${rel}` : 'artifacts';
    if (isConvention(artifact.source) && rel === '' && environment.mountedLogs) {
      const has = await nonEmptyDir(hostDir);
      entries.push({ source: artifact.source, destination, type: 'directory', status: has ? 'ok' : 'empty' });
      continue;
    }
    const probe = await environment.exec(
      `if [ -d ${q(artifact.source)} ]; then echo directory; elif [ -e ${q(artifact.source)} ]; then echo file; else echo missing; fi`,
      { user: 'root', cwd: '/', timeoutSec: 30 },
    );
    const kind = probe.output.trim();
    const type = kind === 'directory' ? 'directory' : 'file';
    if (kind !== 'directory' && kind !== 'file') {
      entries.push({ source: artifact.source, destination, type, status: 'failed' });
      continue;
    }
    try {
      let source = artifact.source;
      if (type === 'directory' && artifact.exclude?.length) {
        // Copy without the excluded paths first (tar --exclude), then download that copy.
        const staging = `/tmp/.berth-artifact-${process.pid}-${entries.length}`;
        const excludes = artifact.exclude.map((e) => `--exclude=${q(e)}`).join(' ');
        await environment.exec(
          `rm -rf ${q(staging)} && mkdir -p ${q(staging)} && tar -C ${q(artifact.source)} ${excludes} -cf - . | tar -C ${q(staging)} -xf -`,
          { user: 'root', cwd: '/', timeoutSec: 300 },
        );
        source = staging;
      }
      await environment.download(source, join(hostDir, rel));
      entries.push({ source: artifact.source, destination, type, status: 'ok' });
    } catch {
      entries.push({ source: artifact.source, destination, type, status: 'failed' });
    }
  }
  await writeJsonAtomic(join(hostDir, 'manifest.json'), entries);
  return entries;
}

/**
 * Puts collected artifacts into a separate verifier environment: the convention
 * folder's files into `conventionHostDir` (the verifier's mounted
 * `/logs/artifacts`), each configured path back at its source path.
 */
export async function uploadArtifacts(
  target: Environment,
  hostDir: string,
  artifacts: ArtifactSpec[],
  conventionHostDir: string,
): Promise<void> {
  await mkdir(conventionHostDir, { recursive: true });
  // The convention folder: everything the agent left in /logs/artifacts (not the configured copies nor the manifest).
  const configured = new Set(
    artifacts
      .map(artifactHostPath)
      .filter(Boolean)
      .map((p) => p.split('/')[0]),
  );
  for (const name of await readdir(hostDir).catch(() => [] as string[])) {
    if (name === 'manifest.json' || configured.has(name)) continue;
    await cp(join(hostDir, name), join(conventionHostDir, name), { recursive: true });
  }
  for (const artifact of artifacts) {
    const rel = artifactHostPath(artifact);
    if (!rel) continue;
    const host = join(hostDir, rel);
    try {
      await stat(host);
    } catch {
      continue;
    }
    await target.upload(host, artifact.source.replace(/\/+$/, ''));
  }
}
