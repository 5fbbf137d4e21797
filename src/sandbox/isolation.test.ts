import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostViewPrefix } from './isolation.ts';

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
];
for (const dir of dirs) mkdirSync(join(home, dir), { recursive: true });

/** The host folders bound read-only by the host view for this PATH. */
function shown(path: string[]): string[] {
  const { prefix } = hostViewPrefix('bwrap', { env: { HOME: home, PATH: path.join(':') } });
  const out: string[] = [];
  prefix.forEach((arg, i) => {
    if (arg === '--ro-bind' && prefix[i + 1] === prefix[i + 2]) out.push(prefix[i + 1] as string);
  });
  return out;
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
