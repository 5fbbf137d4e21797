/**
 * "Did you mean" hints for a name that is not known (an agent, an option's value, a task.toml
 * key): the one edit-distance helper of berth.
 */

/** Levenshtein distance (insertions, deletions, substitutions, each 1). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * The known name closest to `name`: at most two edits away (case ignored), or one that starts
 * with `name` less its last character (`retry` for `retries`); the nearest first, ties in the
 * order given. Undefined when none is near enough.
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    if (candidate === name) continue;
    const lower = candidate.toLowerCase();
    const distance = editDistance(wanted, lower);
    const near =
      distance <= Math.min(2, Math.max(1, wanted.length - 2)) ||
      (wanted.length >= 4 && lower.startsWith(wanted.slice(0, -1)));
    if (near && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** ` (did you mean "oracle"?)` for a name close to a known one, else ''. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const near = closestName(name, known);
  return near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
}
