import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { allowlistPatternError, hostAllowed } from './allowlist.ts';
import { validateAllowedHosts } from './gateway.ts';
import { EGRESS_PROXY_SOURCE } from './proxy-source.ts';

const patterns = ['repo.maven.apache.org', '*.gradle.org', 'Plugins.Gradle.org.', '10.0.0.5', '*.pub.dev'];
// host -> admitted by `patterns`
const table: Array<[string, boolean]> = [
  ['repo.maven.apache.org', true],
  ['REPO.MAVEN.APACHE.ORG.', true],
  ['maven.apache.org', false],
  ['evil-repo.maven.apache.org', false],
  ['repo.maven.apache.org.evil.com', false],
  ['services.gradle.org', true],
  ['a.b.gradle.org', true],
  ['gradle.org', false],
  ['evilgradle.org', false],
  ['plugins.gradle.org', true],
  ['10.0.0.5', true],
  ['10.0.0.6', false],
  ['pub.dev', false],
  ['storage.pub.dev', true],
  ['', false],
];

describe('allowlist matching', () => {
  it.each(table)('%s -> %s', (host, expected) => {
    expect(hostAllowed(host, patterns)).toBe(expected);
  });

  it('the proxy applies the same rule as hostAllowed', () => {
    const python = `${EGRESS_PROXY_SOURCE.replace('if __name__ == "__main__":', 'if False:')}
import json, sys
cases = json.loads(sys.argv[1])
print(json.dumps([admitted(h, {"mode": "allowlist", "allowed_hosts": cases["patterns"]}) for h in cases["hosts"]]))
print(json.dumps([admitted("anything.example", {"mode": "public"}), admitted("x", {"mode": "other"})]))`;
    const output = execFileSync(
      'python3',
      ['-c', python, JSON.stringify({ patterns, hosts: table.map(([h]) => h) })],
      {
        encoding: 'utf8',
      },
    );
    const [lines0, lines1] = output.trim().split('\n');
    expect(JSON.parse(lines0 as string)).toEqual(table.map(([, allowed]) => allowed));
    expect(JSON.parse(lines1 as string)).toEqual([true, false]);
  });
});

describe('allowlist patterns', () => {
  it.each([
    ['example.com', undefined],
    ['*.example.com', undefined],
    ['10.1.2.3', undefined],
    ['[::1]', undefined],
    ['https://example.com', 'URL'],
    ['example.com:443', 'port'],
    ['example.com/path', 'path'],
    ['*example.com', 'wildcard'],
    ['a.*.example.com', 'wildcard'],
    ['*.', 'wildcard'],
    ['', 'empty'],
    ['exa mple.com', 'spaces'],
  ])('%s', (pattern, problem) => {
    const error = allowlistPatternError(pattern);
    if (problem === undefined) expect(error).toBeUndefined();
    else expect(error).toContain(problem);
  });

  it('validateAllowedHosts names the file and the field of a bad entry', () => {
    expect(() =>
      validateAllowedHosts(['ok.example', 'http://bad'], { file: 'task.toml', field: 'agent.allowed_hosts' }),
    ).toThrow(/task\.toml: agent\.allowed_hosts\[1\]: `http:\/\/bad`: a URL/);
  });
});
