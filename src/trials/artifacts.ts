/**
 * Harbor's artifacts (`src/harbor/trial/artifact_handler.py`): after the agent,
 * every configured path is copied out of the environment into
 * `<trial>/artifacts/` (a path lands under its base name, or its
 * `destination`), best effort, and `manifest.json` lists each with its status.
 * `/logs/artifacts` is the convention folder, always collected. Everything is
 * copied as data (src/util/safe-fs.ts: regular files and folders; links and
 * special files are recorded in the manifest entry's `not_copied`, never
 * followed). A separate verifier gets them back: the convention folder at its
 * `/logs/artifacts`, each configured path at its original place.
 */
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { type Environment, logsPath } from '../environments/environment.ts';
import type { ArtifactSpec } from '../tasks/harbor/steps.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { describeSkipped } from '../util/safe-fs.ts';
import { shellQuote as q } from '../util/shell.ts';

export const ARTIFACTS_CONVENTION_DIR = '/logs/artifacts';

export interface ArtifactManifestEntry {
  source: string;
  destination: string;
  type: 'file' | 'directory';
  status: 'ok' | 'empty' | 'failed';
  /** Entries left out of the copy (links, special files, over the size cap): `path: kind -> target (reason)`. */
  not_copied?: string[];
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
    // The convention folder is the environment's own `/logs/artifacts`.
    const source = isConvention(artifact.source) ? logsPath(environment, 'artifacts') : artifact.source;
    if (isConvention(artifact.source) && rel === '') {
      try {
        const copied = await environment.download(source, hostDir);
        entries.push({
          source: artifact.source,
          destination,
          type: 'directory',
          status: copied.files > 0 ? 'ok' : 'empty',
          ...(copied.skippedCount > 0 ? { not_copied: describeSkipped(copied) } : {}),
        });
      } catch {
        entries.push({ source: artifact.source, destination, type: 'directory', status: 'failed' });
      }
      continue;
    }
    const probe = await environment.exec(
      `if [ -d ${q(source)} ]; then echo directory; elif [ -e ${q(source)} ]; then echo file; else echo missing; fi`,
      { user: 'root', cwd: '/', timeoutSec: 30 },
    );
    const kind = probe.output.trim();
    const type = kind === 'directory' ? 'directory' : 'file';
    if (kind !== 'directory' && kind !== 'file') {
      entries.push({ source: artifact.source, destination, type, status: 'failed' });
      continue;
    }
    try {
      let from = source;
      if (type === 'directory' && artifact.exclude?.length) {
        // Copy without the excluded paths first (tar --exclude), then download that copy.
        const staging = `/tmp/.berth-artifact-${process.pid}-${entries.length}`;
        const excludes = artifact.exclude.map((e) => `--exclude=${q(e)}`).join(' ');
        await environment.exec(
          `rm -rf ${q(staging)} && mkdir -p ${q(staging)} && tar -C ${q(source)} ${excludes} -cf - . | tar -C ${q(staging)} -xf -`,
          { user: 'root', cwd: '/', timeoutSec: 300 },
        );
        from = staging;
      }
      const copied = await environment.download(from, join(hostDir, rel));
      entries.push({
        source: artifact.source,
        destination,
        type,
        status: 'ok',
        ...(copied.skippedCount > 0 ? { not_copied: describeSkipped(copied) } : {}),
      });
    } catch {
      entries.push({ source: artifact.source, destination, type, status: 'failed' });
    }
  }
  await writeJsonAtomic(join(hostDir, 'manifest.json'), entries);
  return entries;
}

/**
 * Puts collected artifacts into a separate verifier environment: the convention
 * folder's files into its `/logs/artifacts`, each configured path back at its
 * source path. `hostDir` holds only what `collectArtifacts` copied (data).
 */
export async function uploadArtifacts(
  target: Environment,
  hostDir: string,
  artifacts: ArtifactSpec[],
): Promise<void> {
  // The convention folder: everything the agent left in /logs/artifacts (not the configured copies nor the manifest).
  const configured = new Set(
    artifacts
      .map(artifactHostPath)
      .filter(Boolean)
      .map((p) => p.split('/')[0]),
  );
  const convention = logsPath(target, 'artifacts');
  for (const name of await readdir(hostDir).catch(() => [] as string[])) {
    if (name === 'manifest.json' || configured.has(name)) continue;
    await target.upload(join(hostDir, name), `${convention}/${name}`);
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
