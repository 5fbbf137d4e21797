/**
 * `berth bases build` with the Kotlin Benchmark's build script semantics (issue 19), on a
 * synthetic manifest (the real bases need the internet): every base in dependency order,
 * existing ones skipped, `--force-build` rebuilds, one base by name.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PREFIX = `harbor2-bases-${process.pid}`;
const image = (repo: string, tag: string) => `${PREFIX}/${repo}:${tag}`;

async function imageId(name: string): Promise<string | undefined> {
  const r = await execa('docker', ['image', 'inspect', '-f', '{{.Id}}', name], { reject: false });
  return r.exitCode === 0 ? r.stdout.trim() : undefined;
}

describe.skipIf(skipDocker)('berth bases build (synthetic manifest)', () => {
  let dataset: string;
  const build = (...args: string[]) =>
    execa('node', [join(ROOT, 'bin', 'berth.js'), 'bases', 'build', '-p', dataset, ...args], {
      reject: false,
    });

  beforeAll(() => {
    dataset = tempDir('berth-harbor2-bases-');
    const bases = join(dataset, 'bases');
    mkdirSync(join(bases, 'alpha'), { recursive: true });
    mkdirSync(join(bases, 'beta'), { recursive: true });
    // `extra` builds FROM `base` and is listed first: the order comes from the FROM lines.
    writeFileSync(
      join(bases, 'manifest'),
      `# repo base-tag dockerfile   (image: ${PREFIX}/<repo>:<base-tag>)\nalpha extra Dockerfile.extra\nalpha base Dockerfile.base\nbeta base Dockerfile.base\n`,
    );
    writeFileSync(
      join(bases, 'alpha', 'Dockerfile.base'),
      `FROM ${BASE_IMAGE}\nRUN echo alpha ${process.pid} > /alpha\n`,
    );
    writeFileSync(
      join(bases, 'alpha', 'Dockerfile.extra'),
      `FROM ${image('alpha', 'base')}\nRUN date +%s%N > /extra\n`,
    );
    writeFileSync(
      join(bases, 'beta', 'Dockerfile.base'),
      `FROM ${BASE_IMAGE}\nRUN echo beta ${process.pid} > /beta\n`,
    );
  });
  afterAll(async () => {
    const listed = await execa('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}'], {
      reject: false,
    });
    const mine = listed.stdout
      .split('\n')
      .filter((t) => t.startsWith(`${PREFIX}/`) || /^berth-cache\/base-(alpha|beta)-(base|extra):/.test(t));
    if (mine.length) await execa('docker', ['rmi', '-f', ...mine], { reject: false });
  });

  it('builds every base in dependency order, then skips them; --force-build and a name rebuild one', async () => {
    const first = await build();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      [
        `built   ${image('alpha', 'base')}`,
        `built   ${image('alpha', 'extra')}`,
        `built   ${image('beta', 'base')}`,
      ].join('\n'),
    );
    const ids = {
      base: await imageId(image('alpha', 'base')),
      extra: await imageId(image('alpha', 'extra')),
      beta: await imageId(image('beta', 'base')),
    };
    expect(Object.values(ids).every(Boolean)).toBe(true);

    const again = await build();
    expect(again.stdout).toContain('done: built 0, skipped 3');

    // One base by name, forced: that one is rebuilt (no layer cache), what it builds FROM is kept.
    const forced = await build('alpha:extra', '--force-build');
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(
      `present ${image('alpha', 'base')}\nbuilt   ${image('alpha', 'extra')}\n`,
    );
    expect(forced.stdout).not.toContain(image('beta', 'base'));
    expect(await imageId(image('alpha', 'extra'))).not.toBe(ids.extra);
    expect(await imageId(image('alpha', 'base'))).toBe(ids.base);

    // A missing base named by its repo is built alone; the others are not looked at.
    await execa('docker', ['rmi', image('beta', 'base')]);
    const one = await build('beta');
    expect(one.stdout).toContain(`built   ${image('beta', 'base')}\ndone: built 1, skipped 0`);

    const unknown = await build('gamma');
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain(
      'gamma is not a base of the manifest (bases: alpha:base, alpha:extra, beta:base)',
    );
  });
});
