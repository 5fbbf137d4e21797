/**
 * Which changes of a container's file system (the engine's record, Docker's container diff)
 * count as the agent changing the environment outside its work folder
 * (src/trials/verifier-environment.ts). The real-engine cases are in the tamper corpus
 * (test/tamper/cases/harbor-*.ts).
 */

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { tmpfsOptions } from '../../src/environments/docker/image-volumes.ts';
import type { Environment, FileSystemChange } from '../../src/environments/environment.ts';
import {
  allowedChange,
  changesByTests,
  changesOutside,
  clearedPaths,
  unrecordedPlaceRefusal,
  verifierEnvironment,
} from '../../src/trials/verifier-environment.ts';

const c = (kind: FileSystemChange['kind'], path: string): FileSystemChange => ({ kind, path });

describe('changes outside the work folder', () => {
  it('allows the work folder, the agent and artifacts logs and scratch places; not /logs/verifier, /tests, /usr, /etc', () => {
    for (const path of [
      '/app',
      '/app/calc.py',
      '/logs/agent/x',
      '/logs/artifacts/y',
      '/tmp/.hop.sh',
      '/home/agent/.npm/_logs/a.log',
      '/root/.claude/settings.json',
      '/var/log/apt/history.log',
    ])
      expect(allowedChange(path, '/app', '/logs'), path).toBe(true);
    for (const path of [
      '/application/x',
      '/logs/verifier/reward.txt',
      '/tests/test.sh',
      '/usr/local/bin/python3',
      '/etc/python3.11/sitecustomize.py',
      '/root/.bashrc',
      '/root/.cache/uv/wheels/pytest.whl',
      '/var/cache/apt/archives/python3-pytest.deb',
      '/home/agent/.local/lib/python3.11/site-packages/x.pth',
      '/tmpx',
    ])
      expect(allowedChange(path, '/app', '/logs'), path).toBe(false);
  });

  it('keeps what is new since the record before the agent, without parent folders Docker lists as changed', () => {
    const before = new Set(['changed /etc', 'added /etc/hostname-note']);
    const after = [
      c('changed', '/etc'),
      c('added', '/etc/hostname-note'),
      c('changed', '/usr'),
      c('changed', '/usr/local'),
      c('changed', '/usr/local/bin'),
      c('added', '/usr/local/bin/python3'),
      c('changed', '/app'),
      c('changed', '/app/calc.py'),
      c('deleted', '/opt/tool'),
    ];
    expect(changesOutside(after, before, '/app', '/logs')).toEqual([
      c('added', '/usr/local/bin/python3'),
      c('deleted', '/opt/tool'),
    ]);
  });

  it('a folder listed only because an allowed file below it was added is not a change outside', () => {
    const after = [
      c('added', '/root/.cache'),
      c('added', '/root/.cache/claude-cli-nodejs'),
      c('added', '/root/.cache/claude-cli-nodejs/-app/log.jsonl'),
      c('added', '/root/.cache/uv'),
    ];
    expect(changesOutside(after, new Set(), '/app', '/logs')).toEqual([c('added', '/root/.cache/uv')]);
  });

  it('a work folder of / or inside /usr keeps the protected places outside it', () => {
    const after = [
      c('added', '/usr/bin/x'),
      c('added', '/srv/app/x'),
      c('added', '/etc/x'),
      c('added', '/usr/src/app/y'),
    ];
    expect(changesOutside(after, new Set(), '/', '/logs')).toEqual([
      c('added', '/usr/bin/x'),
      c('added', '/etc/x'),
      c('added', '/usr/src/app/y'),
    ]);
    expect(changesOutside(after, new Set(), '/usr/src/app', '/logs')).toEqual([
      c('added', '/usr/bin/x'),
      c('added', '/srv/app/x'),
      c('added', '/etc/x'),
    ]);
  });
});

describe("what a SWE-bench row's tests changed that berth's commands after them run (containers)", () => {
  it("keeps tools, libraries, /etc and git's settings; not the work folder, scratch, byte-code caches or other ~/.config", () => {
    const before = new Set(['changed /usr', 'changed /usr/local/lib/node_modules/agent']);
    const after = [
      c('changed', '/usr'),
      c('changed', '/usr/local/lib/node_modules/agent'),
      c('changed', '/usr/bin'),
      c('added', '/usr/bin/stat.real'),
      c('changed', '/usr/bin/stat'),
      c('added', '/etc/ld.so.preload'),
      c('added', '/opt/conda/lib/python3.11/json/__pycache__'),
      c('added', '/opt/conda/lib/python3.11/json/__pycache__/decoder.cpython-311.pyc'),
      c('added', '/testbed/tests/__pycache__/test_a.cpython-311.pyc'),
      c('added', '/testbed/tests/extra/conftest.py'),
      c('added', '/tmp/.berth-probe-ab/report.json'),
      c('added', '/root/.config/matplotlib'),
      c('added', '/root/.config/git/config'),
      c('added', '/root/.gitconfig'),
    ];
    expect(changesByTests(after, before, '/testbed')).toEqual([
      c('added', '/usr/bin/stat.real'),
      c('changed', '/usr/bin/stat'),
      c('added', '/etc/ld.so.preload'),
      c('added', '/root/.config/git/config'),
    ]);
  });

  it('a work folder inside /usr exempts only itself', () => {
    const after = [c('added', '/usr/src/app/conftest.py'), c('changed', '/usr/bin/git')];
    expect(changesByTests(after, new Set(), '/usr/src/app')).toEqual([c('changed', '/usr/bin/git')]);
  });
});

describe('what the agent left where tools keep caches, removed before verifying in its container', () => {
  it('the topmost paths the agent added or changed in /tmp, /var/tmp and ~/.npm; never the place, a parent listed for its child, or what was there before', () => {
    // As Docker lists a forged go test result (GOCACHE=/tmp/go-cache) and npx's cache.
    const before = new Set([
      'changed /tmp',
      'added /tmp/image-file',
      'added /tmp/warm',
      'added /tmp/warm/old-a',
    ]);
    const changes = [
      c('changed', '/tmp'),
      c('added', '/tmp/image-file'),
      c('added', '/tmp/warm'),
      c('added', '/tmp/warm/old-a'),
      c('added', '/tmp/warm/new-a'),
      c('added', '/tmp/go-cache'),
      c('added', '/tmp/go-cache/36'),
      c('added', '/tmp/go-cache/36/36bb-a'),
      c('changed', '/var/tmp/kept.txt'),
      c('deleted', '/var/tmp/gone.txt'),
      c('changed', '/root'),
      c('changed', '/root/.npm'),
      c('added', '/root/.npm/_npx/0a1b/node_modules/jest/bin/jest.js'),
      c('added', '/home/agent/.npm/_cacache/index-v5/aa'),
      c('added', '/app/main.go'),
      c('added', '/root/.claude/settings.json'),
      c('added', '/run/agent.pid'),
      c('added', '/var/log/greet.log'),
      // The kernel's mounts: never cleared (the engine lists nothing there anyway).
      c('added', '/dev/shm/x'),
    ];
    expect(clearedPaths(changes, before, '/app')).toEqual([
      '/home/agent/.npm/_cacache/index-v5/aa',
      '/root/.claude/settings.json',
      '/root/.npm/_npx/0a1b/node_modules/jest/bin/jest.js',
      '/run/agent.pid',
      '/tmp/go-cache',
      '/tmp/warm/new-a',
      '/var/log/greet.log',
      '/var/tmp/kept.txt',
    ]);
    expect(clearedPaths(changes, new Set(changes.map((x) => `${x.kind} ${x.path}`)), '/app')).toEqual([]);
    // A work folder of / clears the same; one inside /tmp keeps itself, what it holds and its parents.
    expect(clearedPaths(changes, before, '/')).toEqual(clearedPaths(changes, before, '/app'));
    const inTmp = [
      c('changed', '/tmp'),
      c('added', '/tmp/work'),
      c('added', '/tmp/work/app'),
      c('added', '/tmp/work/app/main.go'),
      c('added', '/tmp/work/cache'),
      c('added', '/tmp/go-cache'),
    ];
    expect(clearedPaths(inTmp, new Set(['changed /tmp']), '/tmp/work/app/')).toEqual([
      '/tmp/go-cache',
      '/tmp/work/cache',
    ]);
  });
});

describe("an image's VOLUME paths: places no record of changes lists (Docker tmpfs mounts of berth's)", () => {
  it("accepts a service's data folder below /var/lib and folders outside the protected places", () => {
    for (const path of [
      '/var/lib/postgresql/data',
      '/var/lib/mysql',
      '/var/lib/data',
      '/data',
      '/srv/db',
      '/tmp/x',
      '/home/alice/data',
    ])
      expect(unrecordedPlaceRefusal(path, '/app', '/logs'), path).toBeUndefined();
  });

  it('refuses where unseen writes change what berth or a verifier runs, and what berth carries or copies', () => {
    const refused: [string, RegExp][] = [
      ['/', /whole file system/],
      ['/root', /\/root\/\.local holds/],
      ['/home', /\.local holds/],
      ['/home/alice', /\/home\/alice\/\.local holds/],
      ['/root/.local/lib', /\/root\/\.local holds/],
      ['/usr/local/lib/python3.11/site-packages', /\/usr holds/],
      ['/etc/ssl', /\/etc holds/],
      ['/var/lib', /\/var\/lib holds/],
      ['/var', /\/var\/lib holds/],
      ['/app', /work folder \/app/],
      ['/app/data', /work folder \/app/],
      ['/srv', /work folder \/srv\/app/],
      ['/logs/verifier', /overlaps \/logs,/],
      ['/tests', /overlaps \/tests,/],
      ['/solution/', /overlaps \/solution,/],
      ['/dev/shm', /kernel's \/dev/],
      ['data', /not an absolute path/],
    ];
    for (const [path, why] of refused) {
      const workdir = path === '/srv' ? '/srv/app' : '/app';
      expect(unrecordedPlaceRefusal(path, workdir, '/logs'), path).toMatch(why);
    }
  });

  it("a tmpfs keeps the image's owner and mode, is capped, nosuid and nodev, noexec unless the image keeps a program there", () => {
    const dir = { path: '/var/lib/postgresql/data', mode: 0o1777, uid: 999, gid: 999, exec: false };
    expect(tmpfsOptions(dir, 100 * 1024 * 1024)).toBe(
      'rw,nosuid,nodev,noexec,size=100m,mode=1777,uid=999,gid=999',
    );
    expect(tmpfsOptions({ ...dir, exec: true, mode: 0o700 }, 1)).toBe(
      'rw,nosuid,nodev,exec,size=1m,mode=700,uid=999,gid=999',
    );
  });

  it('an agent environment with such places never verifies: a fresh one receives the work folder', async () => {
    const calls: string[] = [];
    const agentEnv = (unrecorded?: string[]) =>
      ({
        kind: 'docker',
        workdir: '/app',
        logsDir: '/logs',
        ...(unrecorded ? { unrecorded } : {}),
        killStrayProcesses: async () => 0,
        fileSystemChanges: async () => [c('changed', '/app'), c('added', '/app/calc.py')],
        archive: async () => Readable.from([Buffer.alloc(1024)]),
        exec: async (command: string) => {
          calls.push(`agent: ${command}`);
          return { exitCode: 0, output: '', timedOut: false, durationMs: 0 };
        },
        stop: async () => {
          calls.push('agent: stop');
        },
      }) as unknown as Environment;
    const fresh = {
      kind: 'docker',
      workdir: '/app',
      exec: async (command: string) => {
        calls.push(`fresh: ${command}`);
        return { exitCode: 0, output: '', timedOut: false, durationMs: 0 };
      },
      extractArchive: async (path: string, archive: Readable) => {
        for await (const _ of archive);
        calls.push(`fresh: extract ${path}`);
      },
      stop: async () => undefined,
    } as unknown as Environment;
    const options = { before: new Set<string>(), start: async () => fresh, keepOriginal: false };
    // Without: the agent's environment (nothing changed outside /app).
    const plain = await verifierEnvironment(agentEnv(), options);
    expect('environment' in plain && plain.environment.kind === 'docker' && plain.fresh).toBeFalsy();
    const chosen = await verifierEnvironment(agentEnv(['/var/lib/data']), options);
    if ('failClosed' in chosen) throw new Error(chosen.failClosed.message);
    expect(chosen.environment).toBe(fresh);
    expect(chosen.note).toMatch(/VOLUME paths \(\/var\/lib\/data\).*verified in a fresh environment/);
    expect(calls).toContain('fresh: extract /');
    expect(calls).toContain('agent: stop');
  });
});
