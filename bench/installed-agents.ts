/**
 * Agent set-up of a cached installed agent against a bare environment start, in one run: the
 * bundled task `examples/agents/edit-and-run` (no-network) in Docker.
 *
 * - bare: `provider.start` then `stop`, N times;
 * - agent: `provider.start` with the agent's tool (the cached layer) and the agent's set-up
 *   (`InstalledAgent.setup`: the install record and the cached install's check), then `stop`,
 *   N times, alternating with the bare ones so both see the same machine load.
 *
 * Prints the medians and the added seconds per trial (goal: under 2 s). The layer is built
 * (or found) once before timing; a second job (a new provider) is timed too.
 * Run: `npx tsx bench/installed-agents.ts [N] [agent...]` (default 5, claude-code gemini-cli).
 * Needs a Docker engine and `berth-base:bookworm` (`bash .ci/setup-docker.sh`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InstalledAgent } from '../src/agents/installed/agent.ts';
import {
  AGENT_PACKAGES,
  type InstalledAgentName,
  isInstalledAgentName,
} from '../src/agents/installed/packages.ts';
import { ImageMap } from '../src/environments/docker/dockerfile.ts';
import { DockerEnvironmentProvider } from '../src/environments/docker/provider.ts';
import { loadHarborTask } from '../src/tasks/harbor/loader.ts';

const N = Number(process.argv[2] ?? 5);
const names = process.argv.slice(3).filter(isInstalledAgentName);
const agents: InstalledAgentName[] = names.length > 0 ? names : ['claude-code', 'gemini-cli'];
const BASE = process.env.BERTH_BASE_IMAGE ?? 'berth-base:bookworm';
const task = loadHarborTask(resolve(import.meta.dirname, '..', 'examples', 'agents', 'edit-and-run'));
const imageMap = new ImageMap({ 'debian:bookworm-slim': BASE });
const jobId = `bench-installed-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'berth-bench-installed-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function once(
  provider: DockerEnvironmentProvider,
  agent: InstalledAgent | undefined,
  i: number,
): Promise<number> {
  const trialDir = join(work, `${agent?.info.name ?? 'bare'}-${i}`);
  const started = performance.now();
  const environment = await provider.start({ task, jobId, trialDir, ...(agent ? { tool: agent.tool } : {}) });
  try {
    if (agent)
      await agent.setup({
        task,
        environment,
        attempt: 1,
        logDir: join(trialDir, 'agent'),
        timeoutMultiplier: 1,
      });
    return (performance.now() - started) / 1000;
  } finally {
    await environment.stop();
  }
}

try {
  const provider = new DockerEnvironmentProvider({ imageMap });
  await once(provider, undefined, -1); // the task image, built or cached
  for (const name of agents) {
    const agent = new InstalledAgent({
      name,
      version: AGENT_PACKAGES[name].defaultVersion,
      model: 'bench/model',
    });
    await once(provider, agent, -1); // the layer, built or cached
    const bare: number[] = [];
    const withAgent: number[] = [];
    for (let i = 0; i < N; i++) {
      bare.push(await once(provider, undefined, i));
      withAgent.push(await once(provider, agent, i));
    }
    const newJob = await once(new DockerEnvironmentProvider({ imageMap }), agent, N);
    const added = median(withAgent) - median(bare);
    console.log(
      `${name}: bare start ${median(bare).toFixed(2)} s, start + agent set-up ${median(withAgent).toFixed(2)} s (median of ${N}): +${added.toFixed(2)} s per trial (goal < 2 s: ${added < 2 ? 'met' : 'NOT met'}); a new job's first trial ${newJob.toFixed(2)} s`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
