import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runReportJsonSchema } from '../../src/reporters/json.ts';

const schemaFile = fileURLToPath(new URL('../../docs/run-report.schema.json', import.meta.url));

describe('docs/run-report.schema.json', () => {
  it('is the JSON Schema generated from the zod schema of `berth run --json` (regenerate with BERTH_UPDATE_SCHEMA=1)', () => {
    const generated = `${JSON.stringify(runReportJsonSchema(), null, 2)}\n`;
    if (process.env.BERTH_UPDATE_SCHEMA === '1') writeFileSync(schemaFile, generated);
    expect(readFileSync(schemaFile, 'utf8')).toBe(generated);
    const schema = JSON.parse(generated) as {
      required: string[];
      properties: { trials: { items: { required: string[] } } };
    };
    expect(schema.required).toEqual(expect.arrayContaining(['resolved', 'total', 'trials']));
    expect(schema.properties.trials.items.required).toEqual(
      expect.arrayContaining([
        'instance_id',
        'attempt',
        'status',
        'resolved',
        'FAIL_TO_PASS',
        'PASS_TO_PASS',
      ]),
    );
  });
});
