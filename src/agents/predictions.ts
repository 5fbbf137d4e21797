/**
 * Replays a SWE-bench predictions file: JSON (a list, or an object keyed by
 * instance_id as SWE-agent writes) or JSONL, each prediction holding
 * `instance_id`, `model_name_or_path` and `model_patch`
 * (`swebench/harness/utils.py:get_predictions_from_file`).
 *
 * `model_name_or_path` is optional here (default `"unknown"`): berth only shows it
 * (`agent_info.model_info.name` of each trial). The SWE-bench harness requires it
 * (it names its log folder), so files meant for both tools should carry it.
 */
import { InputError, type InputIssue } from '../errors.ts';
import { readRowFile } from '../tasks/swebench/read-rows.ts';
import type { Task } from '../tasks/task.ts';
import { VERSION } from '../version.ts';
import type { Agent, AgentContext, AgentResult } from './agent.ts';

export interface Prediction {
  instanceId: string;
  modelName: string;
  /** The patch; '' for a null or empty `model_patch`. */
  patch: string;
  /** True when `model_patch` was null (SWE-bench's `patch_is_None`). */
  patchIsNone: boolean;
  file: string;
  line: number;
}

/**
 * Reads a predictions file. Every prediction is checked before anything is
 * refused, so one error lists every bad line.
 * @throws InputError listing every problem (file, line, field of each; see `InputError.all`):
 *   an unparsable file or line, a prediction that is not an object, a missing or ill-typed
 *   `instance_id`/`model_patch`, a `model_name_or_path` that is not a string (it is optional),
 *   or an instance_id given twice.
 */
export async function loadPredictions(file: string): Promise<Map<string, Prediction>> {
  const issues: InputIssue[] = [];
  const rows = await readRowFile(file, { onBadLine: (issue) => issues.push(issue) });
  const out = new Map<string, Prediction>();
  for (const row of rows) {
    const problem = (field: string, message: string) => {
      issues.push({ file: row.file, line: row.line, field, message });
    };
    const value = row.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problem('instance_id', 'a prediction must be a JSON object');
      continue;
    }
    const record = value as Record<string, unknown>;
    const instanceId = record.instance_id ?? row.key;
    const patch = record.model_patch;
    const model = record.model_name_or_path ?? 'unknown';
    const before = issues.length;
    if (typeof instanceId !== 'string' || instanceId === '')
      problem('instance_id', 'missing or not a string');
    if (!('model_patch' in record)) problem('model_patch', 'missing required field');
    else if (patch !== null && typeof patch !== 'string') problem('model_patch', 'expected a string or null');
    if (typeof model !== 'string') problem('model_name_or_path', 'expected a string');
    if (issues.length > before) continue;
    const id = instanceId as string;
    const previous = out.get(id);
    if (previous) {
      problem(
        'instance_id',
        `duplicate prediction for ${JSON.stringify(id)} (first at line ${previous.line})`,
      );
      continue;
    }
    out.set(id, {
      instanceId: id,
      modelName: model as string,
      patch: (patch as string | null) ?? '',
      patchIsNone: patch === null,
      file: row.file,
      line: row.line,
    });
  }
  if (issues.length > 0) throw InputError.all(issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  return out;
}

/** Replays recorded predictions; a task without a prediction is not planned (see `covers`). */
export class PredictionsAgent implements Agent {
  readonly info: { name: string; version: string; modelName?: string };

  constructor(
    private readonly predictions: Map<string, Prediction>,
    private readonly options: { missing?: 'skip' | 'empty' } = {},
  ) {
    const models = new Set([...predictions.values()].map((p) => p.modelName));
    this.info = {
      name: 'predictions',
      version: VERSION,
      ...(models.size === 1 ? { modelName: [...models][0] as string } : {}),
    };
  }

  /** True when the file has a prediction for the task. */
  covers(task: Task): boolean {
    return this.predictions.has(task.name);
  }

  /** Prediction ids that match no task, for the "not found in dataset" check. */
  unknownIds(tasks: Task[]): Prediction[] {
    const names = new Set(tasks.map((t) => t.name));
    return [...this.predictions.values()].filter((p) => !names.has(p.instanceId));
  }

  plannedPatch(task: Task): string | undefined {
    return this.predictions.get(task.name)?.patch ?? (this.options.missing === 'empty' ? '' : undefined);
  }

  async run(context: AgentContext): Promise<AgentResult> {
    const prediction = this.predictions.get(context.task.name);
    if (!prediction && this.options.missing === 'empty') return { patch: '' };
    if (!prediction) throw new Error(`no prediction for ${context.task.name}`);
    return {
      patch: prediction.patch,
      modelName: prediction.modelName,
      metadata: {
        predictions_file: prediction.file,
        line: prediction.line,
        patch_is_none: prediction.patchIsNone,
      },
    };
  }
}
