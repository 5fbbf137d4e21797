/** Harbor's canary lines: comment lines at the top of an instruction that no agent should see. */

const CANARY_LINE = /^(<!--.*canary.*-->|#.*canary.*)$/i;

/**
 * Removes leading canary comment lines (and the blank lines after them) from
 * an instruction, as Harbor's `strip_canary` does.
 */
export function stripCanary(text: string): string {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && CANARY_LINE.test((lines[i] ?? '').trim())) i++;
  while (i < lines.length && (lines[i] ?? '').trim() === '') i++;
  return lines.slice(i).join('\n');
}
