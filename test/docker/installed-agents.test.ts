/**
 * Installed agents in Docker, with the real CLIs from the npm registry: each of the five is
 * prepared on the host (cached under $BERTH_CACHE_DIR/agents), installed into a cached image
 * layer over the task's image, and starts (`--version`, as the agent's set-up runs it) in a
 * `no-network` container; a second trial of the same image installs nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InstalledAgent } from '../../src/agents/installed/agent.ts';
import { AGENT_PACKAGES, INSTALLED_AGENT_NAMES } from '../../src/agents/installed/packages.ts';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { DockerEnvironmentProvider } from '../../src/environments/docker/provider.ts';
import { toolLayerTag } from '../../src/environments/docker/tool-layer.ts';
import type { Environment } from '../../src/environments/environment.ts';
import { loadHarborTask } from '../../src/tasks/harbor/loader.ts';
import { fixtureImageMap, JOB_ID, skipDocker, tempDir } from './helpers.ts';

const TASK_DIR = join(import.meta.dirname, '..', '..', 'examples', 'agents', 'edit-and-run');

describe.skipIf(skipDocker)('installed agents in Docker', () => {
  const task = loadHarborTask(TASK_DIR);

  it('the bundled task is no-network', () => {
    expect(task.environment.kind).toBe('docker');
    expect((task.environment as { network?: { mode: string } }).network?.mode).toBe('no-network');
  });

  for (const name of INSTALLED_AGENT_NAMES) {
    it(`${name}: installed once into a cached layer, starts without network; a second trial installs nothing`, async () => {
      const pkg = AGENT_PACKAGES[name];
      const agent = new InstalledAgent({ name, version: pkg.defaultVersion, model: 'test/model' });
      const starts: Array<{ environment: Environment; trialDir: string }> = [];
      // Two jobs (two providers): the second finds the layer by its tag.
      for (const provider of [
        new DockerEnvironmentProvider({ imageMap: fixtureImageMap() }),
        new DockerEnvironmentProvider({ imageMap: fixtureImageMap() }),
      ]) {
        const trialDir = tempDir(`berth-installed-${name}-`);
        const environment = await provider.start({ task, jobId: JOB_ID, trialDir, tool: agent.tool });
        starts.push({ environment, trialDir });
        try {
          await agent.setup({
            task,
            environment,
            attempt: 1,
            logDir: join(trialDir, 'agent'),
            timeoutMultiplier: 1,
          });
          // The agent's files are there, read-only for the agent user; the network is off.
          const probe = await environment.exec(
            `test -x ${environment.toolInstall?.home}/bin/${pkg.command} && ! touch ${environment.toolInstall?.home}/x 2>/dev/null; echo ok; python3 -c "import socket; socket.create_connection(('1.1.1.1', 53), 2)" 2>&1 | tail -1`,
            { timeoutSec: 30, user: '1000' },
          );
          expect(probe.output).toContain('ok');
          expect(probe.output).toMatch(/unreachable|Errno|timed out/i);
        } finally {
          await environment.stop();
        }
      }
      const [first, second] = starts.map((s) => s.environment.toolInstall);
      expect(first?.error).toBeUndefined();
      expect(first?.home).toBe(`/opt/berth/agents/${name}-${pkg.defaultVersion}`);
      expect(first?.platform).toEqual({ arch: 'x64', libc: 'glibc' });
      expect(second?.installed).toBe(false);
      // The cached install is a tag look-up, not an install.
      expect(second?.durationSec).toBeLessThan(2);
      const version = readFileSync(join(starts[1]?.trialDir ?? '', 'agent', 'setup', 'version.txt'), 'utf8');
      expect(version).toContain(pkg.defaultVersion);
      expect(existsSync(join(starts[0]?.trialDir ?? '', 'agent', 'setup', 'install.log'))).toBe(true);
      const { docker } = await connectDocker();
      const base = await docker
        .getImage(
          await new DockerEnvironmentProvider({ imageMap: fixtureImageMap() }).prepareImage(task, {
            jobId: JOB_ID,
          }),
        )
        .inspect();
      await expect(docker.getImage(toolLayerTag(agent.tool, base.Id)).inspect()).resolves.toBeTruthy();
    });
  }
});
