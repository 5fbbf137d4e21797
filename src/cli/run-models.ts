/**
 * `berth run`'s model options (`-m`, `--model-base-url`, `--env-file`, the
 * limits, prices and cache), checked before any trial: a malformed name, an
 * unknown provider without a base URL, a missing key or a bad limit is a usage
 * error (exit 2) that names the option.
 */
import { URL } from 'node:url';
import { UsageError } from '../errors.ts';
import { FileResponseCache } from '../models/cache.ts';
import { Credentials } from '../models/credentials.ts';
import {
  DEFAULT_CALLS_IN_FLIGHT,
  type GatewayOptions,
  ModelGateway,
  type TrialLimits,
} from '../models/gateway.ts';
import { PriceTable } from '../models/pricing.ts';
import { findProvider, type ModelTarget, resolveModel } from '../models/providers.ts';

/** What the run's options say about models. */
export interface RunModels {
  targets: ModelTarget[];
  limits?: TrialLimits;
  gateway: GatewayOptions;
  /** What config.json records (names, base URLs without credentials, limits; never a key). */
  record: Record<string, unknown>;
}

/** `berth run`'s model options, as commander parses them. */
export interface ModelFlags {
  /** `-m` names (repeatable: one set of trials per model). */
  model?: string[];
  modelBaseUrl?: string;
  envFile?: string;
  modelPrices?: string;
  modelCache?: boolean;
  modelMaxCalls?: string;
  modelMaxTokens?: string;
  modelMaxCost?: string;
  modelMaxInFlight?: string;
  modelBudget?: string;
  modelTimeout?: string;
}

function positive(flag: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(
      `${flag} expects a positive ${integer ? 'whole number' : 'number'}, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** A URL with any user name and password taken out (for the record). */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * The run's models, or undefined without `-m` (or with the `command` agent's old plain label,
 * a name without `/`).
 * @throws UsageError for a bad name, flag or missing key
 */
export function resolveRunModels(
  flags: ModelFlags,
  agent: string,
  /** The keys are where the trials run (queue workers, docs/scale-out.md), not checked here. */
  keysElsewhere = false,
): RunModels | undefined {
  const ids = flags.model ?? [];
  const modelOnly = [
    'modelBaseUrl',
    'modelPrices',
    'modelCache',
    'modelMaxCalls',
    'modelMaxTokens',
    'modelMaxCost',
    'modelMaxInFlight',
    'modelBudget',
    'modelTimeout',
  ] as const;
  // The command agent's -m may be a plain label (its model_name_or_path), as before the gateway:
  // a name without a provider, or of a provider berth does not know, without --model-base-url.
  const label = (id: string) =>
    !id.includes('/') || (!findProvider(id.slice(0, id.indexOf('/'))) && !flags.modelBaseUrl);
  if (ids.length === 0 || (agent === 'command' && ids.length === 1 && label(ids[0] as string))) {
    const used = modelOnly.filter((k) => flags[k] !== undefined);
    if (used.length > 0)
      throw new UsageError(
        `${used.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} need -m PROVIDER/NAME`,
      );
    return undefined;
  }
  if (new Set(ids).size !== ids.length) throw new UsageError('-m: the same model is given twice');
  const credentials = Credentials.load(flags.envFile);
  const targets = ids.map((id) => resolveModel(id, credentials.variables(), flags.modelBaseUrl));
  for (const target of keysElsewhere ? [] : targets) {
    if (target.needsKey && !credentials.keyFor(target))
      throw new UsageError(
        `-m ${target.id}: no key for ${target.provider}; set ${target.keyVar ?? 'its key variable'} or pass --env-file FILE`,
      );
  }
  const maxTurns = positive('--model-max-calls', flags.modelMaxCalls, true);
  const maxTokens = positive('--model-max-tokens', flags.modelMaxTokens, true);
  const maxCostUsd = positive('--model-max-cost', flags.modelMaxCost, false);
  const maxCallsInFlight = positive('--model-max-in-flight', flags.modelMaxInFlight, true);
  const budget = positive('--model-budget', flags.modelBudget, false);
  const timeout = positive('--model-timeout', flags.modelTimeout, false);
  const limits: TrialLimits = {
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    ...(maxCallsInFlight !== undefined ? { maxCallsInFlight } : {}),
  };
  const prices = PriceTable.load(flags.modelPrices);
  return {
    targets,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    gateway: {
      credentials,
      prices,
      ...(budget !== undefined ? { jobBudgetUsd: budget } : {}),
      ...(timeout !== undefined ? { requestTimeoutSec: timeout } : {}),
      ...(flags.modelCache ? { cache: new FileResponseCache() } : {}),
    },
    record: {
      models: targets.map((t) => ({
        id: t.id,
        provider: t.provider,
        name: t.name,
        base_url: withoutCredentials(t.baseUrl),
      })),
      model_limits: {
        max_calls: maxTurns ?? null,
        max_tokens: maxTokens ?? null,
        max_cost_usd: maxCostUsd ?? null,
        max_calls_in_flight: maxCallsInFlight ?? DEFAULT_CALLS_IN_FLIGHT,
        job_budget_usd: budget ?? null,
      },
      model_prices_as_of: prices.asOf,
      model_cache: flags.modelCache === true,
    },
  };
}

/** Starts the job's gateway. */
export function startRunGateway(models: RunModels): Promise<ModelGateway> {
  return ModelGateway.start(models.gateway);
}
