import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ImageMap } from '../../environments/docker/dockerfile.ts';
import { checkTask, formatCheck, networkUse, SUPPORTED_FEATURES, taskFeatures } from './check.ts';
import { loadHarborTask } from './loader.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'harbor');

describe('berth check (static)', () => {
  it('lists a compose task’s services, their images, and the compose keys berth does not use', async () => {
    const { cpSync, mkdtempSync, rmSync, readFileSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'berth-harbor2-check-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const task = join(dir, 'mcp-sidecar');
    cpSync(join(FIXTURES, '..', 'task-fields', 'mcp-sidecar'), task, { recursive: true });
    const compose = join(task, 'environment', 'docker-compose.yaml');
    writeFileSync(compose, `${readFileSync(compose, 'utf8')}    ports:\n      - "8000:8000"\n`);
    const check = await checkTask(loadHarborTask(task), new ImageMap(), async () => true);
    expect(check.services).toEqual(['secrets']);
    expect(check.canRun).toBe('yes');
    // The oracle's and the tests' HTTP requests reach the task's own service, not the internet.
    expect(check.network).toEqual([]);
    expect(check.warnings, JSON.stringify(check.warnings)).toContain(
      `${compose}:17: services.secrets.ports: not used by berth`,
    );
    expect(formatCheck(check)).toContain('services beside main: secrets');
    // storage_mb: what this engine does with it, said per task.
    const onOverlay = await checkTask(loadHarborTask(task), new ImageMap(), async () => true, undefined, {
      storageEnforced: false,
    });
    expect(formatCheck(onOverlay)).toContain(
      "storage: no storage_mb (berth's default 10240 MiB): measured every 10 s and at each phase's end, not enforced (this engine's storage driver takes no size)",
    );
  });

  it('knows which commands reach the network', () => {
    expect(networkUse('./gradlew clean test --continue || true')).toMatch(/Gradle/);
    expect(networkUse('./gradlew --offline test')).toBeUndefined();
    expect(networkUse('mvn -q test')).toMatch(/Maven Central/);
    expect(networkUse('apt-get update -qq && apt-get install -y tmux')).toMatch(/apt/);
    expect(networkUse('git clone https://github.com/x/y.git /home/y')).toMatch(/git/);
    expect(networkUse('git apply --whitespace=nowarn /tests/test.patch')).toBeUndefined();
    expect(networkUse('python3 /tests/junit_compare.py --xml a.xml')).toBeUndefined();
  });

  it('names the build step that needs the network, through a script the Dockerfile runs, and the bases', async () => {
    const task = loadHarborTask(join(FIXTURES, 'based', 'tasks', 'tool-1'));
    const present = new Set(['debian:bookworm-slim']);
    const check = await checkTask(task, new ImageMap(), async (image) => present.has(image));
    expect(check.needs.map((n) => `${n.image} ${n.status}`)).toEqual([
      'based/tool:base-extra dataset base',
      'based/tool:base dataset base',
      'debian:bookworm-slim local',
    ]);
    expect(check.network).toEqual([]);
    expect(check.canRun).toBe('yes');
    // Without the root image and with a network step in the script the Dockerfile runs:
    const missing = await checkTask(task, new ImageMap(), async () => false);
    expect(missing.canRun).toBe('no');
    expect(missing.reasons.join('\n')).toMatch(/missing image\(s\): debian:bookworm-slim/);
    const mapped = await checkTask(
      task,
      new ImageMap({ 'debian:bookworm-slim': 'berth-base:bookworm' }),
      async () => false,
    );
    expect(mapped.canRun).toBe('yes');
    expect(formatCheck(mapped)).toMatch(
      /needs debian:bookworm-slim: mapped \(--image-map -> berth-base:bookworm\)/,
    );
  });

  it('follows a script the Dockerfile runs to the line that needs the network', async () => {
    const { mkdtempSync, writeFileSync, mkdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { scanDockerfile } = await import('./check.ts');
    const root = mkdtempSync(join(tmpdir(), 'berth-check-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const ctx = join(root, 'task', 'environment');
    mkdirSync(ctx, { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM x\nCOPY prepare.sh /home/\nRUN bash /home/prepare.sh\n');
    writeFileSync(join(ctx, 'prepare.sh'), '#!/bin/bash\ncd /home/app\n./gradlew clean test\n');
    const steps = scanDockerfile(join(ctx, 'Dockerfile'), ctx, root, 'build');
    expect(steps).toEqual([
      {
        phase: 'build',
        where: 'task/environment/prepare.sh:3',
        command: './gradlew clean test',
        reaches: 'Gradle: its distribution, Maven Central and the Gradle Plugin Portal',
        via: 'task/environment/Dockerfile:3 RUN bash /home/prepare.sh',
      },
    ]);
  });

  it('reports the Harbor features a task uses beyond a single plain step', () => {
    expect(taskFeatures({ steps: [{ name: 'a' }], agent: { user: 'agent' } })).toEqual([
      '[agent]/[verifier] user',
      'multi-step',
    ]);
    expect(
      taskFeatures({ artifacts: ['/logs/artifacts/x.txt'], environment: { network_mode: 'no-network' } }),
    ).toEqual([]);
    expect(
      taskFeatures({
        artifacts: ['/app/x'],
        agent: { network_mode: 'public' },
        environment: { allow_internet: false },
      }),
    ).toEqual(['artifacts', 'per-phase network mode']);
  });

  it('every feature of task.toml is one berth runs (GPUs where the engine has them)', () => {
    const features = taskFeatures({
      steps: [{ name: 'a' }],
      agent: { user: 'agent' },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Harbor ${VAR} template
      verifier: { environment_mode: 'separate', env: { A: '${A:-x}' } },
      environment: {
        healthcheck: { command: 'true' },
        gpus: 1,
        mcp_servers: [{}],
        skills_dir: 's',
        workdir: '/w',
      },
      artifacts: ['/app/x'],
    });
    expect(features.filter((f) => !SUPPORTED_FEATURES.has(f))).toEqual([]);
  });
});
