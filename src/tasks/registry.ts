/**
 * Dataset loaders by format. `berth run -p PATH` asks each registered loader,
 * most recently registered first, whether it recognises PATH; SWE-bench row
 * files (JSON, JSONL or a folder of them) are the built-in fallback.
 */
import { stat } from 'node:fs/promises';
import { harborLoader } from './harbor/loader.ts';
import { loadSwebench } from './swebench/load.ts';
import type { Task } from './task.ts';

export interface TaskLoader {
  /** Format name, e.g. `swebench`, `harbor`. */
  readonly format: string;
  /** True when this loader reads PATH (a file or a folder). */
  recognises(path: string): Promise<boolean>;
  /** @throws InputError (file, line, field) on bad input. */
  load(path: string): Promise<Task[]>;
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
};

const loaders: TaskLoader[] = [harborLoader];

/** Adds a loader; it is asked before the ones registered earlier and before SWE-bench. */
export function registerTaskLoader(loader: TaskLoader): void {
  loaders.unshift(loader);
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
