/**
 * Dataset loaders by format. `berth run -p PATH` asks each registered loader,
 * most recently registered first, whether it recognises PATH; SWE-bench row
 * files (JSON, JSONL or a folder of them) are the built-in fallback.
 */
import { stat } from 'node:fs/promises';
import { harborLoader } from './harbor/loader.ts';
import { inDocker, inLocal } from './swebench/instance-image.ts';
import { loadSwebench } from './swebench/load.ts';
import type { Task } from './task.ts';

export interface TaskLoader {
  /** Format name, e.g. `swebench`, `harbor`. */
  readonly format: string;
  /** True when this loader reads PATH (a file or a folder). */
  recognises(path: string): Promise<boolean>;
  /** @throws InputError (file, line, field) on bad input. */
  load(path: string): Promise<Task[]>;
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
 * Loads a dataset with the first loader that recognises it.
 * @throws InputError from the loader, or when the path does not exist.
 */
export async function loadTasks(path: string): Promise<{ format: string; tasks: Task[] }> {
  for (const loader of [...loaders, swebenchLoader]) {
    if (await loader.recognises(path)) return { format: loader.format, tasks: await loader.load(path) };
  }
  return { format: 'swebench', tasks: await loadSwebench(path) };
}
