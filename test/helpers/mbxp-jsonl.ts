/**
 * A tiny reader for MBXP problem and sample JSONL files, used by the JVM tests and bench until
 * they switch to the functional module's loader. Not a general loader: no gzip, no JSON arrays.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { JvmSample } from '../../src/functional/jvm/jvm-types.ts';
import type { JvmLanguage } from '../../src/functional/jvm/program.ts';

export interface MbxpProblem {
  task_id: string;
  prompt: string;
  test: string;
  entry_point: string;
  canonical_solution: string | null;
  language: string;
}

/** `BERTH_DATA` or `../shared/data` from the repository root. */
export function dataRoot(): string {
  return process.env.BERTH_DATA ?? resolve(import.meta.dirname, '..', '..', '..', 'shared', 'data');
}

export function readJsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

/** MBKP problems and example samples from `functional/mbxp/` under the data root. */
export function mbkpFiles(root = dataRoot()) {
  const dir = join(root, 'functional', 'mbxp');
  return { problems: join(dir, 'mbkp_release_v1.2.jsonl'), samples: join(dir, 'mbkp_samples.jsonl') };
}

/** Joins samples with their problems into JVM samples keyed `<task_id>#<n>`. */
export function toJvmSamples(
  problems: MbxpProblem[],
  samples: { task_id: string; completion: string }[],
  language: JvmLanguage,
): JvmSample[] {
  const byId = new Map(problems.map((p) => [p.task_id, p]));
  return samples.map((s, i) => {
    const p = byId.get(s.task_id);
    if (!p) throw new Error(`sample ${i + 1}: unknown task_id ${s.task_id}`);
    return { key: `${s.task_id}#${i}`, language, prompt: p.prompt, completion: s.completion, test: p.test };
  });
}
