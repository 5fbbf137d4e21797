/** Splits `1.2.3-rc.1` into its release parts and its pre-release identifiers. */
export function parse(version) {
  const [release, pre] = version.split('-', 2);
  return { release: release.split('.'), pre: pre === undefined ? [] : pre.split('.') };
}

/** -1, 0 or 1 as `a` sorts before, with or after `b`. */
export function compare(a, b) {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    if (x.release[i] !== y.release[i]) return x.release[i] < y.release[i] ? -1 : 1;
  }
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length === 0 ? 0 : x.pre.length === 0 ? 1 : -1;
  return x.pre.join('.') < y.pre.join('.') ? -1 : x.pre.join('.') > y.pre.join('.') ? 1 : 0;
}

export function sort(versions) {
  return [...versions].sort(compare);
}
