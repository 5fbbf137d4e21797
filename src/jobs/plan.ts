/**
 * Planning a job: which tasks (after -i/-x globs and the -l limit) and how many
 * attempts (-k) each, in a stable order, with a stable trial name per attempt.
 */

import picomatch from 'picomatch';
import type { Agent } from '../agents/agent.ts';
import type { ModelTarget } from '../models/providers.ts';
import type { Task } from '../tasks/task.ts';
import { trialNameFor } from './names.ts';

/** One planned trial. */
export interface PlannedTrial {
  task: Task;
  /** 1-based attempt. */
  attempt: number;
  /** Folder name under the job: `<task name>__<attempt>` (unsafe characters replaced). */
  trialName: string;
  /** The trial's model (`-m`), when the job calls models. */
  model?: ModelTarget;
  /** The trial's agent when it is not the job's (one agent per model with several `-m`). */
  agent?: Agent;
}

export interface PlanOptions {
  /** Keep tasks whose name matches one of these globs (`*`, `?`, `[...]`). */
  include?: string[];
  /** Drop tasks whose name matches one of these globs. */
  exclude?: string[];
  /** Keep at most this many tasks (after filtering). */
  limit?: number;
  /** Attempts per task (default 1). */
  attempts?: number;
}

/**
 * The matcher of a task-name glob, as Harbor's `-i`/`-x` read them (Python's `fnmatch`): `*` any
 * run of characters (`/` included), `?` one character, `[...]` a class, `[!...]` a negated one;
 * no braces or extglobs. Compiled by picomatch.
 */
export function globMatcher(glob: string): (name: string) => boolean {
  // fnmatch's negated class `[!...]` is picomatch's `[^...]` (picomatch reads a leading `!` inside
  // a class literally).
  const pattern = glob.replace(/\[!/g, '[^');
  return picomatch(pattern, { bash: true, dot: true, nobrace: true, noextglob: true, nonegate: true });
}

export { trialNameFor };

/** Plans tasks x attempts. Order: tasks in dataset order, attempts 1..k for each. */
export function planTrials(tasks: Task[], options: PlanOptions = {}): PlannedTrial[] {
  const include = (options.include ?? []).map(globMatcher);
  const exclude = (options.exclude ?? []).map(globMatcher);
  let selected = tasks.filter(
    (task) =>
      (include.length === 0 || include.some((matches) => matches(task.name))) &&
      !exclude.some((matches) => matches(task.name)),
  );
  if (options.limit !== undefined) selected = selected.slice(0, options.limit);
  const attempts = options.attempts ?? 1;
  const used = new Set<string>();
  const plan: PlannedTrial[] = [];
  for (const task of selected) {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let trialName = trialNameFor(task.name, attempt);
      for (let n = 2; used.has(trialName); n++) trialName = `${trialNameFor(task.name, attempt)}_${n}`;
      used.add(trialName);
      plan.push({ task, attempt, trialName });
    }
  }
  return plan;
}

/**
 * One set of trials per model (Harbor's repeated `-m`): the plan repeated for each model,
 * with the model's name added to the trial names when there is more than one.
 */
export function planPerModel(
  plan: readonly PlannedTrial[],
  models: ReadonlyArray<{ target: ModelTarget; agent: Agent }>,
): PlannedTrial[] {
  if (models.length === 0) return [...plan];
  const safe = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60);
  return models.flatMap(({ target, agent }) =>
    plan.map((trial) => ({
      ...trial,
      trialName: models.length > 1 ? `${trial.trialName}__${safe(target.id)}` : trial.trialName,
      model: target,
      agent,
    })),
  );
}
