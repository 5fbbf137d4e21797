/**
 * SWE-bench rows in a container: the harness's instance image for a row that names none,
 * and the switch between the local environment and Docker (`berth run --env`).
 *
 * Image names (SWE-bench `swebench/harness/test_spec/test_spec.py:instance_image_key`,
 * tag v4.0.4): a local harness build is `sweb.eval.x86_64.<instance_id lower-cased>:latest`;
 * the image on Docker Hub (`--namespace swebench`, the default) is
 * `swebench/sweb.eval.x86_64.<instance_id lower-cased, "__" written "_1776_">:latest`.
 * In both, the repository is a git checkout of `base_commit` at `/testbed` and the tests run in
 * the conda environment `testbed`.
 */
import type { ImageMap } from '../../environments/docker/dockerfile.ts';
import type { Task } from '../task.ts';
import type { RunnableProblem } from './runnable.ts';
import { harnessSpec, harnessTestCommand } from './specs.ts';

/** The harness's instance image names for an instance id (x86_64, tag `latest`). */
export function instanceImageNames(instanceId: string): { remote: string; local: string } {
  const key = `sweb.eval.x86_64.${instanceId.toLowerCase()}:latest`;
  return { remote: `swebench/${key}`.replaceAll('__', '_1776_'), local: key };
}

/** The harness's spec for the task's row (`repo`, `version` kept in its metadata), if any. */
function specOf(task: Task) {
  const { repo, version } = task.metadata;
  if (typeof repo !== 'string' || (typeof version !== 'string' && typeof version !== 'number'))
    return undefined;
  return harnessSpec(repo, version);
}

/**
 * The task run in a container: a row that names no image gets the harness's instance image
 * (`instanceImageNames(...).remote`), the repository at `/testbed`, no network; a test
 * command taken from the harness's specs gets the harness's preamble (conda `testbed`,
 * `eval_commands`, `install`). Tasks already in Docker, and tasks of other formats, are
 * returned unchanged.
 */
export function inDocker(task: Task): Task {
  if (task.format !== 'swebench' || task.environment.kind !== 'local') return task;
  const verifier = task.verifier;
  const spec = specOf(task);
  const testCommand =
    verifier.kind === 'swebench' && spec && verifier.testCommand === harnessTestCommand(spec)
      ? harnessTestCommand(spec, { container: true })
      : undefined;
  return {
    ...task,
    environment: {
      kind: 'docker',
      image: instanceImageNames(task.name).remote,
      workdir: '/testbed',
      network: { mode: 'no-network' },
    },
    ...(testCommand !== undefined && verifier.kind === 'swebench'
      ? { verifier: { ...verifier, testCommand } }
      : {}),
  };
}

/**
 * The task run in the local environment (a snapshot or a `--repos` mirror): a row that names
 * an image runs from its `repo` and `base_commit` instead, without the container preamble.
 */
export function inLocal(task: Task): Task {
  if (task.format !== 'swebench' || task.environment.kind !== 'docker') return task;
  const { repo, base_commit: baseCommit } = task.metadata;
  const verifier = task.verifier;
  const spec = specOf(task);
  const testCommand =
    verifier.kind === 'swebench' &&
    spec &&
    verifier.testCommand === harnessTestCommand(spec, { container: true })
      ? harnessTestCommand(spec)
      : undefined;
  return {
    ...task,
    environment: {
      kind: 'local',
      ...(typeof repo === 'string' ? { repo } : {}),
      ...(typeof baseCommit === 'string' ? { baseCommit } : {}),
    },
    ...(testCommand !== undefined && verifier.kind === 'swebench'
      ? { verifier: { ...verifier, testCommand } }
      : {}),
  };
}

/**
 * Checks, before any trial, that a Docker task whose image is the harness's instance image can
 * get it here: mapped with `--image-map`, present on the engine under the Docker Hub name, or
 * present under the local build name (the task then uses that one). berth never pulls.
 * @param imageExists asks the engine; undefined when no engine answers.
 * @returns the problem, or undefined (with `task` possibly switched to the local build name).
 */
export async function instanceImageProblem(
  task: Task,
  imageMap: ImageMap,
  imageExists: ((image: string) => Promise<boolean>) | undefined,
): Promise<{ problem?: RunnableProblem; task: Task }> {
  const env = task.environment;
  if (task.format !== 'swebench' || env.kind !== 'docker' || env.image === undefined) return { task };
  const names = instanceImageNames(task.name);
  if (env.image !== names.remote && env.image !== names.local) return { task };
  if (imageMap.explicit(env.image)) return { task };
  if (imageExists) {
    if (await imageExists(env.image)) return { task };
    const other = env.image === names.remote ? names.local : names.remote;
    if (await imageExists(other)) return { task: { ...task, environment: { ...env, image: other } } };
  }
  if (imageMap.fallback) return { task };
  const map = `map it onto a local image with --image-map ${names.remote}=<image>`;
  return {
    task,
    problem: {
      field: 'instance_id',
      message: imageExists
        ? `the SWE-bench instance image ${names.remote} is not on this Docker engine (also looked for ${names.local}, the name of a local harness build); berth does not pull images: load or build it (SWE-bench's harness builds it), or ${map}`
        : `the SWE-bench instance image ${names.remote} (or a local harness build ${names.local}) is needed and no Docker engine answers; start one (e.g. dockerd), or ${map}`,
    },
  };
}
