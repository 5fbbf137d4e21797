/**
 * Post-processing of model output into a completion, as the Kotlin HumanEval
 * seed (JetBrains' dataset card) does it, each step a named option:
 *
 * 1. `stopAt`: cut the generated text after the first stop sequence, keeping
 *    it (the card stops generation once `"\n}\n"` appears in the new tokens;
 *    the decoded answer therefore ends with that closing brace).
 * 2. `stripComments`: remove `//…` line comments, then `/* … *\/` block
 *    comments (the card's two regexes; note that the card's own
 *    `clean_asnwer` computes these but returns the uncommented text unused,
 *    so comments are NOT removed in its published results).
 * 3. `dropSignature`: on prompt + generated text, keep only the lines after
 *    the first line that starts with `fun ` (the card's signature removal);
 *    when no such line exists the generated text is kept.
 *
 * `extractCode` (for chat models) keeps the body of the first fenced code
 * block when there is one.
 */

export interface PostprocessOptions {
  stopAt?: string[];
  stripComments?: boolean;
  dropSignature?: boolean;
  /** Line prefix of the signature for `dropSignature` (default `fun `, Kotlin). */
  signaturePrefix?: string;
  extractCode?: boolean;
}

/** Cuts after the earliest of the stop sequences, keeping the sequence itself. */
export function stopAt(text: string, sequences: readonly string[]): string {
  let cut = -1;
  for (const sequence of sequences) {
    if (sequence === '') continue;
    const at = text.indexOf(sequence);
    if (at >= 0 && (cut < 0 || at + sequence.length < cut)) cut = at + sequence.length;
  }
  return cut < 0 ? text : text.slice(0, cut);
}

/** The card's regexes: `//.*` then `/\*.*?\*\/` with DOTALL. */
export function stripComments(code: string): string {
  return code.replace(/\/\/.*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}

/**
 * The card's `clean_asnwer` signature step, applied to prompt + generated:
 * the lines after the first one starting with `prefix`; `undefined` when none does.
 */
export function dropSignature(code: string, prefix = 'fun '): string | undefined {
  const lines = code.split('\n');
  const at = lines.findIndex((line) => line.startsWith(prefix));
  return at < 0 ? undefined : lines.slice(at + 1).join('\n');
}

/** The first fenced code block's body, or the text unchanged. */
export function extractCode(text: string): string {
  const match = /```[\w+-]*\n([\s\S]*?)(?:```|$)/.exec(text);
  return match ? (match[1] as string) : text;
}

/** Turns generated text into the completion to evaluate. */
export function postprocess(prompt: string, generated: string, options: PostprocessOptions): string {
  let text = generated;
  if (options.extractCode) text = extractCode(text);
  if (options.stopAt && options.stopAt.length > 0) text = stopAt(text, options.stopAt);
  if (options.stripComments) text = stripComments(text);
  if (options.dropSignature) {
    // The card decodes prompt + answer together and keeps the lines after the first signature line.
    const code = `${options.stripComments ? stripComments(prompt) : prompt}${text}`;
    text = dropSignature(code, options.signaturePrefix) ?? text;
  }
  return text;
}
