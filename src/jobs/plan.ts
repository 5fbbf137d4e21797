/**
 * Planning a job: which tasks (after -i/-x globs and the -l limit) and how many
 * attempts (-k) each, in a stable order, with a stable trial name per attempt.
 */
import type { Agent } from '../agents/agent.ts';
import type { ModelTarget } from '../models/providers.ts';
import type { Task } from '../tasks/task.ts';

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

/** Compiles a glob (`*` any run of characters, `?` one, `[...]` a class) to an anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** A file-system-safe trial folder name. */
export function trialNameFor(taskName: string, attempt: number): string {
  const safe = taskName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
  return `${safe}__${attempt}`;
}

/** Plans tasks x attempts. Order: tasks in dataset order, attempts 1..k for each. */
export function planTrials(tasks: Task[], options: PlanOptions = {}): PlannedTrial[] {
  const include = (options.include ?? []).map(globToRegExp);
  const exclude = (options.exclude ?? []).map(globToRegExp);
  let selected = tasks.filter(
    (task) =>
      (include.length === 0 || include.some((re) => re.test(task.name))) &&
      !exclude.some((re) => re.test(task.name)),
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
