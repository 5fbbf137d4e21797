/** Quotes a string for POSIX sh (single quotes, with embedded quotes escaped). */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Shell function: removes the first symlink among the leading components of $1. */
const UNLINK_LEADING = [
  'berth_unlink_leading() { berth_p=; berth_rest=$1;',
  'while case $berth_rest in */*) true ;; *) false ;; esac; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not a template
  'berth_p=${berth_p:+$berth_p/}${berth_rest%%/*}; berth_rest=${berth_rest#*/};',
  'if [ -L "$berth_p" ]; then rm -f -- "$berth_p"; return 0; fi; done; return 0; }',
].join(' ');

/**
 * Shell lines that remove any symlink standing in a leading component of each path (the
 * symlink itself, never its target), so that a following `rm -rf -- path` or checkout cannot
 * reach outside the repository through it: a patch may replace `tests/` by a link to a host
 * folder, and `rm -rf -- tests/x` would then delete the host's `x`. Paths are relative to
 * the current folder; the last component is left alone (`rm -rf` removes a link, not its
 * target).
 */
export function unlinkLeadingSymlinks(paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  return [UNLINK_LEADING, ...paths.map((p) => `berth_unlink_leading ${shellQuote(p)}`)];
}
