import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHostMethod, hostViewPrefix, resolverFile } from './isolation.ts';

// HOME must be outside /tmp (the host view hides PATH entries and a HOME under /tmp).
const home = mkdtempSync('/var/tmp/berth-isolation-test-');
afterAll(() => rmSync(home, { recursive: true, force: true }));

const dirs = [
  'code/proj/node_modules/.bin',
  'code/secrets',
  '.pyenv/shims',
  '.pyenv/versions',
  '.cargo/bin',
  '.rustup/toolchains',
  '.local/bin',
  '.local/share/agent-auth',
  '.local/lib/python3.11/site-packages/pytest',
  '.m2/repository/org/acme/lib/1.0',
  '.m2/wrapper',
  '.gradle/caches/modules-2/files-2.1',
  '.gradle/wrapper/dists',
  'go/pkg/mod/github.com/acme',
  'go/src/private',
  '.cache/go-build',
];
for (const dir of dirs) mkdirSync(join(home, dir), { recursive: true });
const files: Record<string, string> = {
  '.m2/repository/org/acme/lib/1.0/lib-1.0.pom': '<project/>',
  '.m2/settings.xml':
    '<settings><servers><server><password>m2-secret</password></server></servers></settings>',
  '.gradle/gradle.properties': 'signing.password=gradle-secret',
  '.local/lib/python3.11/site-packages/pytest/__init__.py': '',
  '.local/share/agent-auth/token': 'local-secret',
};
for (const [path, text] of Object.entries(files)) writeFileSync(join(home, path), text);

/** The host folders bound read-only by the host view for this PATH (and more of the host's environment). */
function shown(path: string[], env: Record<string, string> = {}, at = home): string[] {
  const { prefix } = hostViewPrefix('bwrap', { env: { HOME: at, PATH: path.join(':'), ...env } });
  const out: string[] = [];
  prefix.forEach((arg, i) => {
    if (arg === '--ro-bind' && prefix[i + 1] === prefix[i + 2]) out.push(prefix[i + 1] as string);
  });
  return out;
}

/** The shown folders under HOME, relative to it. */
function shownUnderHome(path: string[], env: Record<string, string> = {}, at = home): string[] {
  return shown(path, env, at)
    .filter((dir) => dir.startsWith(`${at}/`))
    .map((dir) => dir.slice(at.length + 1));
}

describe('the bwrap host view of PATH folders under HOME (reviewer, session 9)', () => {
  it('shows a PATH folder under HOME by itself, never the folder above it', () => {
    const binds = shown([join(home, 'code/proj/node_modules/.bin'), join(home, '.local/bin')]);
    expect(binds).toContain(join(home, 'code/proj/node_modules/.bin'));
    expect(binds).toContain(join(home, '.local/bin'));
    for (const hidden of ['code', 'code/proj', 'code/secrets', '.local', '.local/share'])
      expect(binds).not.toContain(join(home, hidden));
  });

  it("shows a known toolchain home whole (pyenv's versions, cargo's rustup)", () => {
    const binds = shown([join(home, '.pyenv/shims'), join(home, '.cargo/bin')]);
    expect(binds).toEqual(
      expect.arrayContaining([join(home, '.pyenv'), join(home, '.cargo'), join(home, '.rustup')]),
    );
    expect(binds).not.toContain(home);
  });
});

describe('the bwrap host view of toolchain folders outside PATH (reviewer, session 10)', () => {
  it("shows Maven's local repository, Python's user site-packages and Go's module cache, nothing else of HOME", () => {
    // No PATH folder under HOME: only the toolchain folders themselves are shown.
    expect(shownUnderHome(['/usr/bin']).sort()).toEqual([
      '.local/lib/python3.11/site-packages',
      '.m2/repository',
      'go/pkg/mod',
    ]);
  });

  it('never shows ~/.m2 (settings.xml), ~/.gradle, the rest of ~/.local or GOPATH, nor GOCACHE', () => {
    const binds = shownUnderHome(['/usr/bin'], { GOCACHE: join(home, '.cache/go-build') });
    for (const hidden of ['.m2', '.m2/wrapper', '.gradle', '.gradle/caches', '.gradle/caches/modules-2'])
      expect(binds).not.toContain(hidden);
    for (const hidden of ['.gradle/wrapper/dists', '.local', '.local/lib', 'go', 'go/src', '.cache/go-build'])
      expect(binds).not.toContain(hidden);
  });

  it('follows GOMODCACHE, GOPATH and PYTHONUSERBASE where they point', () => {
    const other = mkdtempSync('/var/tmp/berth-isolation-toolchains-');
    try {
      for (const dir of ['gomod', 'gopath/pkg/mod', 'gopath/src', 'pybase/lib/python3.12/site-packages'])
        mkdirSync(join(other, dir), { recursive: true });
      expect(shown(['/usr/bin'], { GOMODCACHE: join(other, 'gomod') })).toContain(join(other, 'gomod'));
      const byGopath = shown(['/usr/bin'], { GOPATH: `${join(other, 'gopath')}:/elsewhere` });
      expect(byGopath).toContain(join(other, 'gopath/pkg/mod'));
      expect(byGopath).not.toContain(join(other, 'gopath'));
      expect(byGopath).not.toContain(join(home, 'go/pkg/mod'));
      const byBase = shown(['/usr/bin'], { PYTHONUSERBASE: join(other, 'pybase') });
      expect(byBase).toContain(join(other, 'pybase/lib/python3.12/site-packages'));
      expect(byBase).not.toContain(join(home, '.local/lib/python3.11/site-packages'));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('shows no toolchain folder reached through a link under HOME, nor HOME itself', () => {
    const linked = mkdtempSync('/var/tmp/berth-isolation-linked-');
    try {
      mkdirSync(join(linked, '.ssh'));
      mkdirSync(join(linked, '.m2'));
      symlinkSync(join(linked, '.ssh'), join(linked, '.m2', 'repository'));
      symlinkSync(linked, join(linked, 'go'));
      expect(shownUnderHome(['/usr/bin'], {}, linked)).toEqual([]);
      expect(shown(['/usr/bin'], { GOMODCACHE: linked, PYTHONUSERBASE: '/' }, linked)).not.toContain(linked);
    } finally {
      rmSync(linked, { recursive: true, force: true });
    }
  });

  it('shows a Homebrew prefix whole for its bin on PATH (its commands link into ../Cellar)', () => {
    const brew = mkdtempSync('/var/tmp/berth-isolation-brew-');
    try {
      for (const dir of ['.linuxbrew/bin', '.linuxbrew/Cellar/jq/1.7/bin', 'plain/bin'])
        mkdirSync(join(brew, dir), { recursive: true });
      const binds = shown([join(brew, '.linuxbrew/bin'), join(brew, 'plain/bin')]);
      expect(binds).toContain(join(brew, '.linuxbrew'));
      // A bin without a Cellar beside it is shown by itself.
      expect(binds).toContain(join(brew, 'plain/bin'));
      expect(binds).not.toContain(join(brew, 'plain'));
    } finally {
      rmSync(brew, { recursive: true, force: true });
    }
  });

  it('shows where /etc/resolv.conf links out of the shown folders (systemd-resolved), only with the network', () => {
    const etc = mkdtempSync('/var/tmp/berth-isolation-resolv-');
    try {
      const stub = join(etc, 'run/systemd/resolve/stub-resolv.conf');
      mkdirSync(dirname(stub), { recursive: true });
      writeFileSync(stub, 'nameserver 127.0.0.53\n');
      symlinkSync('../run/systemd/resolve/stub-resolv.conf', join(etc, 'etc-resolv.conf'));
      mkdirSync(join(etc, 'etc'));
      symlinkSync('../run/systemd/resolve/stub-resolv.conf', join(etc, 'etc', 'resolv.conf'));
      expect(resolverFile(join(etc, 'etc', 'resolv.conf'))).toEqual({ source: stub, at: stub });
      writeFileSync(join(etc, 'plain.conf'), 'nameserver 10.0.0.1\n');
      expect(resolverFile(join(etc, 'plain.conf'))).toBeUndefined();
      symlinkSync('/etc/hostname', join(etc, 'into-etc.conf'));
      expect(resolverFile(join(etc, 'into-etc.conf'))).toBeUndefined();
    } finally {
      rmSync(etc, { recursive: true, force: true });
    }
    // This host's own: bound only when the command has the network, and only when it links out.
    const host = resolverFile();
    const binds = (noNetwork: boolean) =>
      hostViewPrefix('bwrap', { noNetwork, env: { HOME: home, PATH: '/usr/bin' } }).prefix.join(' ');
    if (host) expect(binds(false)).toContain(`--ro-bind ${host.source} ${host.at}`);
    if (host) expect(binds(true)).not.toContain(host.at);
  });

  it('a real sandbox reads the Maven repository and not settings.xml, gradle.properties or ~/.local/share', (ctx) => {
    const problem = checkHostMethod('bwrap');
    if (problem) ctx.skip(`bwrap does not work here: ${problem}`);
    const { prefix } = hostViewPrefix('bwrap', { env: { HOME: home, PATH: '/usr/bin:/bin' } });
    const script = [
      'cat ~/.m2/repository/org/acme/lib/1.0/lib-1.0.pom',
      'ls ~/.local/lib/python3.11/site-packages',
      'cat ~/.m2/settings.xml ~/.gradle/gradle.properties ~/.local/share/agent-auth/token 2>/dev/null',
      'echo end',
    ].join('; ');
    const out = spawnSync(prefix[0] as string, [...prefix.slice(1), 'bash', '-c', script], {
      encoding: 'utf8',
      env: { HOME: home, PATH: '/usr/bin:/bin' },
    });
    expect(out.stdout, out.stderr).toBe('<project/>pytest\nend\n');
  });
});
