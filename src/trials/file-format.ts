/**
 * How berth writes a trial's records to disk: snake_case field names (Harbor's where
 * Harbor has one), durations in seconds rounded to milliseconds, and Harbor's
 * `verifier/reward.txt` for verifiers that do not write one themselves (SWE-bench).
 * Also upgrades a trial result written by an earlier berth (camelCase `agent_result`,
 * unrounded durations, no reward file) when a job is resumed.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentInfo, AgentResult } from '../agents/agent.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.ts';
import type { TrialResult } from './result.ts';

/** Seconds rounded to milliseconds (3 decimals), as every duration berth writes. */
export function roundSec(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** `modelName` → `model_name`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** An agent's identity as config.json records it: Harbor's AgentConfig names (`model_name`). */
export function agentInfoForFile(info: AgentInfo): {
  name: string;
  version: string;
  model_name: string | null;
} {
  return { name: info.name, version: info.version, model_name: info.modelName ?? null };
}

/**
 * The agent's result as the trial's `agent_result` records it (the patch is in
 * `agent/patch.diff`): top-level keys in snake_case (`modelName` → `model_name`);
 * `metadata` is kept as the agent gave it.
 */
export function agentResultForFile(result: Omit<AgentResult, 'patch'>): Record<string, unknown> {
  return snakeKeys(result);
}

/** A copy of a record with its top-level keys in snake_case. */
export function snakeKeys(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [snakeCase(key), value]));
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Writes Harbor's `verifier/reward.txt` (the single `reward`, e.g. `1` resolved, `0` not)
 * for a trial that has rewards and no reward file yet, so tools reading Harbor rewards
 * work on SWE-bench trials. A reward file written by the task's own tests is never replaced.
 * @returns whether a file was written.
 */
export async function writeRewardFile(trialDir: string, result: TrialResult): Promise<boolean> {
  const rewards = result.verifier_result?.rewards;
  if (!rewards || typeof rewards.reward !== 'number') return false;
  const dir = join(trialDir, 'verifier');
  if ((await exists(join(dir, 'reward.txt'))) || (await exists(join(dir, 'reward.json')))) return false;
  if (Object.keys(rewards).length === 1)
    await writeFileAtomic(join(dir, 'reward.txt'), `${rewards.reward}\n`);
  else await writeFileAtomic(join(dir, 'reward.json'), `${JSON.stringify(rewards)}\n`);
  return true;
}

function roundDurations(value: unknown): boolean {
  let changed = false;
  if (Array.isArray(value)) {
    for (const item of value) changed = roundDurations(item) || changed;
  } else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(record)) {
      if (/duration_sec$/.test(key) && typeof v === 'number' && roundSec(v) !== v) {
        record[key] = roundSec(v);
        changed = true;
      } else if (key !== 'tests') changed = roundDurations(v) || changed;
    }
  }
  return changed;
}

/**
 * Brings a trial result written by an earlier berth to the current file format, in place:
 * `agent_result` keys in snake_case, durations rounded to milliseconds, `matchedBy` /
 * `matchedId` of the verdicts as `matched_by` / `matched_id`.
 * @returns whether anything changed (the caller rewrites the file then).
 */
export function upgradeTrialResult(result: TrialResult): boolean {
  let changed = false;
  if (result.agent_result && typeof result.agent_result === 'object') {
    const upgraded = snakeKeys(result.agent_result);
    if (Object.keys(upgraded).join() !== Object.keys(result.agent_result).join()) {
      result.agent_result = upgraded;
      changed = true;
    }
  }
  if (result.berth) changed = roundDurations(result.berth) || changed;
  const tests = result.berth?.verifier_details?.tests;
  if (Array.isArray(tests)) {
    for (const test of tests as Record<string, unknown>[]) {
      for (const key of ['matchedBy', 'matchedId']) {
        if (test && key in test) {
          test[snakeCase(key)] = test[key];
          delete test[key];
          changed = true;
        }
      }
    }
  }
  return changed;
}

/** Verdicts as berth writes them: `matchedBy` / `matchedId` as `matched_by` / `matched_id`. */
export function verdictsForFile<T extends object>(verdicts: readonly T[]): Record<string, unknown>[] {
  return verdicts.map(snakeKeys);
}

/**
 * Brings a `config.json` (a job's or a trial's) written by an earlier berth to the current
 * format: `agent` as `{name, version, model_name}`. Leaves a missing or unreadable file alone.
 * @returns whether the file was rewritten.
 */
export async function upgradeConfigFile(file: string): Promise<boolean> {
  const config = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as Record<string, unknown>)
    .catch(() => undefined);
  const agent = config?.agent as Record<string, unknown> | undefined;
  if (!config || !agent || typeof agent !== 'object' || 'model_name' in agent) return false;
  config.agent = {
    name: agent.name,
    version: agent.version,
    model_name: typeof agent.modelName === 'string' ? agent.modelName : null,
  };
  await writeJsonAtomic(file, config);
  return true;
}
