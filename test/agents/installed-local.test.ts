/**
 * Installed agents in the local environment's sandbox, with the real CLIs: the prepared host
 * folder (cached under $BERTH_CACHE_DIR/agents) is bound read-only into the sandbox and the
 * CLI starts there without network, as the sandbox's unprivileged uid.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InstalledAgent } from '../../src/agents/installed/agent.ts';
import { AGENT_PACKAGES } from '../../src/agents/installed/packages.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';

const SAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'swe-dockerless.jsonl');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('installed agents in the local sandbox', () => {
  for (const name of ['claude-code', 'codex'] as const) {
    it(`${name}: the prepared folder is bound read-only and the CLI starts without network`, {
      timeout: 600_000,
    }, async () => {
      const [task] = await loadSwebench(SAMPLE);
      if (!task) throw new Error('the sample has no row');
      const pkg = AGENT_PACKAGES[name];
      const agent = new InstalledAgent({ name, version: pkg.defaultVersion, model: 'test/model' });
      const provider = new LocalEnvironmentProvider();
      for (const round of [1, 2]) {
        const trialDir = await mkdtemp(join(tmpdir(), `berth-installed-local-${name}-`));
        dirs.push(trialDir);
        const environment = await provider.start({
          task,
          jobId: 'installed-local',
          trialDir,
          tool: agent.tool,
        });
        try {
          const record = environment.toolInstall;
          expect(record?.error).toBeUndefined();
          if (round === 2) expect(record?.installed).toBe(false);
          await agent.setup({
            task,
            environment,
            attempt: 1,
            logDir: join(trialDir, 'agent'),
            timeoutMultiplier: 1,
          });
          expect(readFileSync(join(trialDir, 'agent', 'setup', 'version.txt'), 'utf8')).toContain(
            pkg.defaultVersion,
          );
          // Without a sandbox here the bind is moot; the CLI still ran above.
          if (environment.isolated) {
            const home = record?.home ?? '';
            const probe = await environment.exec(
              `"${home}/bin/${pkg.command}" --version; touch "${home}/x" 2>/dev/null && echo writable || echo read-only`,
              { timeoutSec: 60, binds: record?.binds ?? [] },
            );
            expect(probe.output).toContain(pkg.defaultVersion);
            expect(probe.output).toContain('read-only');
          }
        } finally {
          await environment.stop();
        }
      }
    });
  }
});
