/**
 * Validation of ATIF trajectories against Harbor's own model as a JSON Schema
 * (`reference/harbor-schemas/Trajectory.schema.json` of the shared folder, the parent of
 * `BERTH_DATA`: default `../shared` beside the repository); undefined when the schema is not
 * there (the caller skips with a reason).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import { dataDir } from './data.ts';

export const TRAJECTORY_SCHEMA = join(
  dirname(dataDir),
  'reference',
  'harbor-schemas',
  'Trajectory.schema.json',
);

/** A validator of trajectories, or undefined without the schema file. */
export function trajectoryValidator(): ((value: unknown) => string[]) | undefined {
  if (!existsSync(TRAJECTORY_SCHEMA)) return undefined;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(JSON.parse(readFileSync(TRAJECTORY_SCHEMA, 'utf8')) as object);
  return (value) =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
