import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));

describe('berth CLI', () => {
  it('prints the version from package.json', () => {
    const out = execFileSync('node', [bin, '--version'], { encoding: 'utf8' });
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('exits 2 on an unknown command', () => {
    const result = spawnSync('node', [bin, 'no-such-command'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
  });
});
