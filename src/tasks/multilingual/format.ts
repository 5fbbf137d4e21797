/**
 * The multilingual demo's files (seed `multilingual-swe-demo.md`; harbor-format §8.3):
 *
 * - `sample_task.json`: a JSON list, one entry per task: `instance_id`
 *   (`<owner>__<repo>__<hash>`), `task_type` (BF, FE, FI, RF, TG, CD),
 *   `task_type_reason`, `base_commit`, `language`, `repo_url`,
 *   `problem_statement`, `tar_path` (the image archive, optional here) and
 *   `ut_results` `{f2p_tests, p2p_tests, p2f_tests, f2f_tests}`.
 * - `sample_tasks/<instance_id>/tests/config.json`: `log_parser` (a parser
 *   registry name; SWE-rebench names such as `parse_log_pytest` are accepted),
 *   `test_cmd`, optional `test_timeout_sec`, and the same four lists.
 *
 * The lists may also be spelled `f2p`/`FAIL_TO_PASS` and so on, and may be
 * JSON-encoded strings, as SWE-bench files sometimes store them.
 */
import { z } from 'zod';

const ALIASES: Record<string, string[]> = {
  f2p_tests: ['f2p', 'FAIL_TO_PASS', 'fail_to_pass'],
  p2p_tests: ['p2p', 'PASS_TO_PASS', 'pass_to_pass'],
  p2f_tests: ['p2f', 'PASS_TO_FAIL', 'pass_to_fail'],
  f2f_tests: ['f2f', 'FAIL_TO_FAIL', 'fail_to_fail'],
};

/** Renames list aliases to the canonical `*_tests` keys and decodes JSON-string lists. */
function normalizeLists(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, aliases] of Object.entries(ALIASES)) {
    for (const alias of aliases) {
      if (out[key] === undefined && out[alias] !== undefined) out[key] = out[alias];
      delete out[alias];
    }
    if (typeof out[key] === 'string') {
      try {
        out[key] = JSON.parse(out[key] as string);
      } catch {
        // left as is: the schema names the field
      }
    }
  }
  return out;
}

const testList = z.array(z.string());

export const utResultsSchema = z.preprocess(
  normalizeLists,
  z.object({
    f2p_tests: testList,
    p2p_tests: testList.default([]),
    p2f_tests: testList.default([]),
    f2f_tests: testList.default([]),
  }),
);
export type UtResults = z.infer<typeof utResultsSchema>;

/** Task types the seed names. Others are accepted and reported as they are. */
export const TASK_TYPES: Record<string, string> = {
  BF: 'Bug Fix',
  FE: 'Feature Enhancement',
  FI: 'Feature Implementation',
  RF: 'Refactoring',
  TG: 'Test Generation',
  CD: 'Code Documentation',
};

export const sampleTaskSchema = z.looseObject({
  instance_id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, `_`, `.` and `-` only (a folder name)'),
  task_type: z.string().min(1),
  task_type_reason: z.string().optional(),
  base_commit: z.string().regex(/^[0-9a-f]{7,64}$/, 'a commit id (hex)'),
  language: z.string().min(1),
  repo_url: z.string().min(1),
  problem_statement: z.string(),
  tar_path: z.string().optional(),
  ut_results: utResultsSchema,
});
export type SampleTask = z.infer<typeof sampleTaskSchema>;

export const taskConfigSchema = z.preprocess(
  normalizeLists,
  z.looseObject({
    instance_id: z.string().optional(),
    log_parser: z.string().min(1),
    test_cmd: z.string().min(1),
    /** Seconds; default the task.toml verifier timeout. */
    test_timeout_sec: z.number().positive().optional(),
    f2p_tests: testList,
    p2p_tests: testList.default([]),
    p2f_tests: testList.default([]),
    f2f_tests: testList.default([]),
  }),
);
export type TaskConfig = z.infer<typeof taskConfigSchema>;
