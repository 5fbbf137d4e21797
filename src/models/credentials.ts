/**
 * Where model keys come from: the process's environment, merged with a
 * dotenv file (`--env-file FILE`, read with Node's `util.parseEnv`; the file
 * wins). Keys live only in this process's memory: the gateway adds them to
 * upstream requests, and nothing berth writes or hands to an environment holds
 * them (agents get a per-trial token instead).
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { InputError } from '../errors.ts';
import type { ModelTarget } from './providers.ts';

/** The variables berth reads keys and base URLs from. */
export class Credentials {
  private constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** The process's variables, and those of `envFile` over them. */
  static load(envFile?: string, base: Record<string, string | undefined> = process.env): Credentials {
    if (envFile === undefined) return new Credentials({ ...base });
    let text: string;
    try {
      text = readFileSync(envFile, 'utf8');
    } catch (error) {
      throw new InputError({ file: envFile }, `cannot read the env file: ${(error as Error).message}`);
    }
    let parsed: Record<string, string>;
    try {
      parsed = parseEnv(text) as Record<string, string>;
    } catch (error) {
      throw new InputError({ file: envFile }, `not a dotenv file: ${(error as Error).message}`);
    }
    return new Credentials({ ...base, ...parsed });
  }

  /** For tests and library callers: exactly these variables. */
  static of(env: Record<string, string | undefined>): Credentials {
    return new Credentials({ ...env });
  }

  /** The merged variables (for base-URL look-ups; never written anywhere). */
  variables(): Readonly<Record<string, string | undefined>> {
    return this.env;
  }

  /** The key of a model's provider, or undefined. */
  keyFor(target: ModelTarget): string | undefined {
    const value = target.keyVar ? this.env[target.keyVar] : undefined;
    return value === '' ? undefined : value;
  }

  /** Every key value known (to check that none leaked into a file). */
  secrets(targets: readonly ModelTarget[]): string[] {
    return targets.map((t) => this.keyFor(t)).filter((k): k is string => k !== undefined && k.length >= 8);
  }
}
