/**
 * Allowlist patterns of Harbor's `allowed_hosts` (harbor-format §1.2/§1.3):
 * exact hosts or `*.suffix`, no URLs, ports or paths. berth enforces them with
 * an egress proxy (see gateway.ts); this module validates the patterns and
 * holds the matching rule the proxy applies.
 */

/** Why a pattern was refused, or undefined when it is valid. */
export function allowlistPatternError(pattern: string): string | undefined {
  const value = pattern.trim();
  if (value === '') return 'empty host';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'a URL is not a host (drop the scheme)';
  if (/[/?#@\s]/.test(value)) return 'a host has no path, query, user or spaces';
  const bare = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  if (bare.includes(':') && !isIpv6(bare)) return 'a host has no port';
  if (value.includes('*') && !(value.startsWith('*.') && !value.slice(2).includes('*') && value.length > 2)) {
    return 'a wildcard is only allowed as a leading `*.` (e.g. `*.example.com`)';
  }
  if (
    !isIpv6(bare) &&
    !/^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i.test(value)
  ) {
    return 'not a host name';
  }
  return undefined;
}

function isIpv6(value: string): boolean {
  return /^[0-9a-f:.]+$/i.test(value) && value.includes(':');
}

/** Lower case, brackets of an IPv6 literal and one trailing dot removed. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  if (value.endsWith('.')) value = value.slice(0, -1);
  return value;
}

/**
 * Whether `host` is admitted by `patterns`: equal to a listed host, or a strict
 * subdomain of `suffix` for a pattern `*.suffix` (`*.example.com` admits
 * `a.example.com` and `a.b.example.com`, not `example.com`; list both when both
 * are wanted). Case and a trailing dot are ignored; IP literals match only
 * when listed exactly.
 */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const name = normalizeHost(host);
  if (name === '') return false;
  for (const raw of patterns) {
    const pattern = normalizeHost(raw);
    if (pattern.startsWith('*.')) {
      const suffix = pattern.slice(1);
      if (name.endsWith(suffix) && name.length > suffix.length) return true;
    } else if (name === pattern) {
      return true;
    }
  }
  return false;
}
