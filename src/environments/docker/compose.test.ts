// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose's ${VAR} interpolation is under test
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { durationSec, interpolate, readComposeProject } from './compose.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-compose-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (text: string) => {
  const f = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(f, text);
  return f;
};

describe('docker-compose files of tasks', () => {
  it('reads main and its sidecars in dependency order, with healthchecks in seconds', () => {
    const p = readComposeProject(
      file(
        [
          'services:',
          '  main:',
          '    depends_on: { api: { condition: service_healthy } }',
          '  api:',
          '    build: ./api',
          '    depends_on: [db]',
          '    environment: ["MODE=${MODE:-test}", "EMPTY="]',
          '    healthcheck:',
          '      test: curl -f http://localhost/',
          '      interval: 1m30s',
          '      timeout: 500ms',
          '      start_period: 2s',
          '  db:',
          '    image: postgres:16',
          '    command: ["postgres", "-c", "fsync=off"]',
          '    ports: ["5432:5432"]',
        ].join('\n'),
      ),
      { MODE: 'ci' },
    );
    expect(p.main.dependsOn).toEqual([{ service: 'api', condition: 'service_healthy' }]);
    expect(p.sidecars.map((s) => s.name)).toEqual(['db', 'api']);
    const api = p.sidecars[1];
    expect(api?.build?.context).toBe(join(dir, 'api'));
    expect(api?.environment).toEqual({ MODE: 'ci', EMPTY: '' });
    expect(api?.healthcheck).toEqual({
      test: ['CMD-SHELL', 'curl -f http://localhost/'],
      intervalSec: 90,
      timeoutSec: 0.5,
      retries: 3,
      startPeriodSec: 2,
    });
    expect(p.sidecars[0]?.command).toEqual(['postgres', '-c', 'fsync=off']);
    // `ports` would publish on the host: not used, and said.
    expect(p.warnings).toEqual([`${p.file}:16: services.db.ports: not used by berth`]);
  });

  it('refuses a file without main, an unknown dependency, a cycle, a service without image or build', () => {
    const bad = (text: string) => () => readComposeProject(file(text));
    expect(bad('services:\n  api:\n    image: x\n')).toThrow(/no `main` service/);
    expect(bad('services:\n  main: {}\n  api:\n    image: x\n    depends_on: [nope]\n')).toThrow(
      /:5: services.api.depends_on: depends on `nope`/,
    );
    expect(
      bad(
        'services:\n  main: {}\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [a]\n',
      ),
    ).toThrow(/cycle/);
    expect(bad('services:\n  main: {}\n  a:\n    command: run\n')).toThrow(/needs `image` or `build`/);
    expect(
      bad('services:\n  main: {}\n  a:\n    image: x\n    healthcheck: { test: true, interval: soon }\n'),
    ).toThrow(InputError);
  });

  it('interpolates as compose does', () => {
    expect(interpolate('${A} $B ${C:-dflt} ${D-x} $$E', { A: '1', B: '2' })).toBe('1 2 dflt x $E');
    expect(durationSec('1h2m3s', 0)).toBe(3723);
    expect(() => durationSec('10 minutes', 0)).toThrow();
  });
});
