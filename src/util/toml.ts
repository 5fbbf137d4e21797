/**
 * The one TOML reader of berth's inputs (task.toml, the multilingual demo's task.toml, berth's
 * settings file): smol-toml, with a syntax error said as every input error is,
 * `FILE:LINE:COL: invalid TOML: <what>` (src/errors.ts).
 */
import { parse, TomlError } from 'smol-toml';
import { InputError } from '../errors.ts';

/**
 * Parses a TOML document.
 * @param text the document
 * @param file its path, for the message
 * @throws InputError (exit 2) at the line and column of a syntax error
 */
export function parseTomlInput(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError) {
      // smol-toml's message: "Invalid TOML document: <what>" then a code frame.
      const what = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'invalid';
      throw new InputError({ file, line: error.line, column: error.column }, `invalid TOML: ${what}`, {
        cause: error,
      });
    }
    throw new InputError({ file }, `invalid TOML: ${(error as Error).message}`, { cause: error });
  }
}
