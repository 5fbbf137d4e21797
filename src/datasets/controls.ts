/**
 * Negative controls for a dataset (the seed's `tools/make_controls.py`): three
 * predictions files that a sound dataset must score 0 on.
 *
 * - `empty`: every instance submits an empty patch.
 * - `cross`: every instance submits the gold patch of the next instance
 *   (in file order, wrapping around), a plausible but wrong fix.
 * - `partial`: every instance submits its gold patch without the last hunk
 *   (see `withoutLastHunk`); instances whose gold has a single hunk get no
 *   partial prediction and are listed in `skipped`.
 *
 * Files are SWE-bench predictions JSONL: `instance_id`, `model_name_or_path`, `model_patch`.
 */
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { countHunks, withoutLastHunk } from './patches.ts';
import { checkRowsLoad, type RowAt } from './rows.ts';

export type ControlName = 'empty' | 'cross' | 'partial';
export const CONTROL_NAMES: readonly ControlName[] = ['empty', 'cross', 'partial'];

/** One SWE-bench prediction. */
export interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string;
}

export interface Controls {
  predictions: Record<ControlName, Prediction[]>;
  /** Instances left out of a control, with the reason. */
  skipped: { control: ControlName; instance_id: string; reason: string }[];
}

/**
 * Builds the three controls from dataset rows. Every row is first checked with
 * the loader `berth run` uses (`checkRowsLoad`), then each needs a gold `patch`
 * that is a unified diff.
 * @throws InputError (exit 2) listing every row the loader refuses, with the message
 *   `berth run` gives (file, line, field); or naming a row whose gold patch is missing or not a diff.
 */
export function makeControls(rows: readonly RowAt[]): Controls {
  checkRowsLoad(rows);
  const gold = rows.map((at) => {
    const patch = at.row.patch;
    if (typeof patch !== 'string' || patch.trim() === '') {
      throw new InputError({ file: at.file, line: at.line, field: 'patch' }, 'missing or empty gold patch');
    }
    try {
      countHunks(patch);
    } catch (error) {
      throw new InputError(
        { file: at.file, line: at.line, field: 'patch' },
        `not a unified diff: ${(error as Error).message}`,
      );
    }
    return { id: at.row.instance_id as string, patch };
  });
  const controls: Controls = { predictions: { empty: [], cross: [], partial: [] }, skipped: [] };
  gold.forEach(({ id, patch }, index) => {
    controls.predictions.empty.push({
      instance_id: id,
      model_name_or_path: 'control-empty',
      model_patch: '',
    });
    if (gold.length > 1) {
      const other = gold[(index + 1) % gold.length] as { patch: string };
      controls.predictions.cross.push({
        instance_id: id,
        model_name_or_path: 'control-cross',
        model_patch: other.patch,
      });
    } else {
      controls.skipped.push({
        control: 'cross',
        instance_id: id,
        reason: 'a single instance has no other gold patch',
      });
    }
    const partial = withoutLastHunk(patch);
    if (partial === undefined) {
      controls.skipped.push({
        control: 'partial',
        instance_id: id,
        reason: 'the gold patch has a single hunk',
      });
    } else {
      controls.predictions.partial.push({
        instance_id: id,
        model_name_or_path: 'control-partial',
        model_patch: partial,
      });
    }
  });
  return controls;
}

/** Writes `<dir>/<control>.jsonl` for each control; returns the paths written. */
export async function writeControls(controls: Controls, dir: string): Promise<Record<ControlName, string>> {
  const paths = {} as Record<ControlName, string>;
  for (const name of CONTROL_NAMES) {
    const path = join(dir, `${name}.jsonl`);
    await writeFileAtomic(path, controls.predictions[name].map((p) => `${JSON.stringify(p)}\n`).join(''));
    paths[name] = path;
  }
  return paths;
}
