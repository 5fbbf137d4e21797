/** Splits `1.2.3-rc.1` into its release parts and its pre-release identifiers. */
export function parse(version) {
  const [release, pre] = version.split('-', 2);
  return { release: release.split('.').map(Number), pre: pre === undefined ? [] : pre.split('.') };
}

function compareIdentifiers(a, b) {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b)) return Math.sign(Number(a) - Number(b));
  if (numeric.test(a)) return -1;
  if (numeric.test(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1, 0 or 1 as `a` sorts before, with or after `b`. */
export function compare(a, b) {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    if (x.release[i] !== y.release[i]) return x.release[i] < y.release[i] ? -1 : 1;
  }
  if (x.pre.length === 0 || y.pre.length === 0) return x.pre.length === y.pre.length ? 0 : x.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    if (x.pre[i] === undefined) return -1;
    if (y.pre[i] === undefined) return 1;
    const order = compareIdentifiers(x.pre[i], y.pre[i]);
    if (order !== 0) return order;
  }
  return 0;
}

export function sort(versions) {
  return [...versions].sort(compare);
}
