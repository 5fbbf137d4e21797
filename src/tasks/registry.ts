/**
 * Dataset loaders by format. `berth run -p PATH` asks each registered loader,
 * most recently registered first, whether it recognises PATH; SWE-bench row
 * files (JSON, JSONL or a folder of them) are the built-in fallback.
 */
import { stat } from 'node:fs/promises';
import type { InputIssue } from '../errors.ts';
import { harborLoader } from './harbor/loader.ts';
import { inDocker, inLocal } from './swebench/instance-image.ts';
import { loadSwebench } from './swebench/load.ts';
import type { Task } from './task.ts';

/** A task of a dataset that is invalid and not run, with every problem found in it. */
export interface SkippedTask {
  /** Its folder (Harbor) or file. */
  dir: string;
  issues: InputIssue[];
}

export interface TaskLoader {
  /** Format name, e.g. `swebench`, `harbor`. */
  readonly format: string;
  /** True when this loader reads PATH (a file or a folder). */
  recognises(path: string): Promise<boolean>;
  /** @throws InputError (file, line, field) on bad input. */
  load(path: string): Promise<Task[]>;
  /**
   * Loads the valid tasks of a dataset and lists the invalid ones (Harbor: a
   * task folder per task, each valid or not on its own).
   * @throws InputError when nothing valid is left.
   */
  loadValid?(path: string): Promise<{ tasks: Task[]; skipped: SkippedTask[] }>;
  /**
   * The task as run in an environment of `kind` (`berth run --env`): e.g. a SWE-bench row in
   * the harness's instance image, or a multilingual task in a local folder. Absent: the
   * format runs where its tasks say.
   */
  place?(task: Task, kind: 'local' | 'docker'): Task;
}

export const swebenchLoader: TaskLoader = {
  format: 'swebench',
  async recognises(path) {
    try {
      await stat(path);
      return true;
    } catch {
      return false;
    }
  },
  load: loadSwebench,
  place: (task, kind) => (kind === 'docker' ? inDocker(task) : inLocal(task)),
};

const loaders: TaskLoader[] = [harborLoader];

/** Adds a loader; it is asked before the ones registered earlier and before SWE-bench. */
export function registerTaskLoader(loader: TaskLoader): void {
  loaders.unshift(loader);
}

/** The tasks as run in environments of `kind` (`--env`), each by its format's loader. */
export function placeTasks(tasks: readonly Task[], kind: 'local' | 'docker'): Task[] {
  const byFormat = new Map([...loaders, swebenchLoader].map((l) => [l.format, l]));
  return tasks.map((task) => byFormat.get(task.format)?.place?.(task, kind) ?? task);
}

/**
 * Loads a dataset with the first loader that recognises it: its tasks, and the
 * invalid tasks it skipped (only loaders with `loadValid` skip any).
 * @throws InputError from the loader, or when the path does not exist.
 */
export async function loadTasks(
  path: string,
): Promise<{ format: string; tasks: Task[]; skipped: SkippedTask[] }> {
  for (const loader of [...loaders, swebenchLoader]) {
    if (!(await loader.recognises(path))) continue;
    if (loader.loadValid) return { format: loader.format, ...(await loader.loadValid(path)) };
    return { format: loader.format, tasks: await loader.load(path), skipped: [] };
  }
  return { format: 'swebench', tasks: await loadSwebench(path), skipped: [] };
}
