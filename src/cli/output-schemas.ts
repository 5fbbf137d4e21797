/**
 * The JSON documents `berth parse --json` and `berth grade --json` print, as
 * zod schemas. `docs/parse-output.schema.json` and
 * `docs/grade-output.schema.json` are generated from them
 * (`npx tsx src/cli/output-schemas.ts --write`); a test keeps them in sync.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const status = z.enum(['PASSED', 'FAILED', 'ERROR', 'SKIPPED']);
const counts = z.object({
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  error: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
});

export const parseOutputSchema = z
  .object({
    format: z.string().describe('Registry name of the parser; `mixed` when the files had different formats.'),
    merged: z
      .boolean()
      .describe(
        'True when the tests of several files were merged into one run (`berth parse --merge`, and `berth grade`); false when each file counts on its own.',
      ),
    counts: counts.describe(
      'Tests per status: the sum of the per-file counts, or (merged) the counts after merging duplicates across files.',
    ),
    tests: z
      .array(
        z
          .object({
            id: z.string().describe('Stable test id, documented per format (JUnit: `classname.name`).'),
            status,
            durationSec: z.number().optional(),
            message: z.string().optional().describe('First line of the failure or skip message.'),
          })
          .catchall(z.unknown())
          .describe(
            'One test; format-specific fields (file, package, flaky, reruns...) may follow. Unless merged, `report` names the input file it came from.',
          ),
      )
      .describe(
        "Each file's tests in file order (an id may appear once per file); merged: one entry per test id, duplicates merged by ERROR > FAILED > PASSED > SKIPPED.",
      ),
    unnamed: z
      .array(
        z.object({
          file: z.string().describe('The file the results belong to, as the runner printed it.'),
          status,
          count: z.number().int().nonnegative(),
          locations: z.array(z.string()).optional().describe('Where the runner located them (`file:line`).'),
          skips: z
            .array(z.object({ line: z.number().int(), count: z.number().int(), reason: z.string() }))
            .optional()
            .describe(
              'Skipped results: the skip summaries located in this file (1-based line, how many, why).',
            ),
          report: z.string().describe('The input file that reported them.'),
        }),
      )
      .optional()
      .describe(
        "Results the log reports without naming their test (pytest's classic progress characters, `SKIPPED [N] file:line` lines): counted in `counts`, never given an invented id.",
      ),
    warnings: z.array(z.string()).describe('Problems that did not stop parsing, prefixed by the file name.'),
    truncated: z.boolean().describe('True when any input looks cut short.'),
    files: z.array(
      z.object({
        file: z.string(),
        format: z.string(),
        counts,
        truncated: z.boolean(),
        countMismatch: z
          .object({ reported: z.number(), parsed: z.number(), summary: z.string() })
          .optional()
          .describe(
            "The runner's own total (e.g. unittest's `Ran N tests`) disagrees with the tests parsed.",
          ),
      }),
    ),
  })
  .describe('`berth parse --json` output');

export type ParseOutput = z.infer<typeof parseOutputSchema>;

const reason = z.enum(['missing', 'failed', 'error', 'skipped', 'truncated-log', 'wrong-category']);

export const gradeOutputSchema = z
  .object({
    rules: z.enum(['swebench', 'multi-swe-bench', 'kotlin']),
    swebenchRules: z
      .enum(['default', 'swebench'])
      .optional()
      .describe(
        "SWE-bench rows: `default`, berth's rules (stricter where the harness is wrong), or `swebench` (`--rules swebench`), the harness's verdict.",
      ),
    resolved: z.boolean(),
    reward: z.number().describe('1 when resolved, else 0.'),
    valid: z.boolean().describe('The run passed the rule set validity checks.'),
    invalidReason: z.string().optional(),
    error: z.string().optional().describe('Why no grade could be computed (reward 0).'),
    categories: z.record(
      z.string(),
      z.object({ expected: z.number().int().nonnegative(), passed: z.number().int().nonnegative() }),
    ),
    verdicts: z.array(
      z.object({
        id: z.string(),
        category: z.string(),
        passed: z.boolean(),
        status: status.optional(),
        reason: reason.optional().describe('Why the test does not count as passed.'),
        matchedBy: z
          .enum(['exact', 'prefix', 'path-parameter'])
          .optional()
          .describe(
            '`prefix`: a truncated expected id matched longer reported ids; `path-parameter`: a reported id whose absolute-path parameter SWE-bench shortens to its last segment.',
          ),
        matchedId: z.string().optional(),
        matchedIds: z.array(z.string()).optional().describe('Every reported id it stood for, when several.'),
        note: z.string().optional().describe('What the log says about a test it does not name.'),
      }),
    ),
    prefixMatches: z
      .array(z.object({ expected: z.string(), matched: z.array(z.string()) }))
      .describe('Every expected id matched other than exactly, with every reported id it stood for.'),
    droppedExpected: z
      .array(z.object({ id: z.string(), category: z.string(), reason: z.string() }))
      .optional()
      .describe(
        'Expected ids dropped from the gold lists because they cannot name a test (`[100%]`, `[`); SWE-bench default rules only (`--rules swebench` looks them up as the harness does).',
      ),
    warnings: z.array(z.string()),
    reports: z.array(z.string()).describe('The report files read.'),
  })
  .describe('`berth grade --json` output');

export type GradeOutput = z.infer<typeof gradeOutputSchema>;

/** The JSON Schema documents written to `docs/`. */
export function jsonSchemas(): Record<string, unknown> {
  return {
    'parse-output.schema.json': z.toJSONSchema(parseOutputSchema),
    'grade-output.schema.json': z.toJSONSchema(gradeOutputSchema),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  for (const [name, schema] of Object.entries(jsonSchemas())) {
    writeFileSync(
      fileURLToPath(new URL(`../../docs/${name}`, import.meta.url)),
      `${JSON.stringify(schema, null, 2)}\n`,
    );
  }
}
