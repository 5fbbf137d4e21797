/**
 * Validation of ATIF trajectories against Harbor's own model as a JSON Schema (the copy in
 * test/fixtures/atif/, from the shared reference `harbor-schemas/Trajectory.schema.json`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { fixturesDir } from './data.ts';

/** A validator of trajectories: the schema's errors, none when valid. */
export function trajectoryValidator(): (value: unknown) => string[] {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(
    JSON.parse(readFileSync(join(fixturesDir, 'atif', 'Trajectory.schema.json'), 'utf8')) as object,
  );
  return (value) =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
