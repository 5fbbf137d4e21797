/**
 * Cost of model calls. The provider's own figure wins where it reports one
 * (OpenRouter's `usage.cost`); otherwise berth's dated price table
 * (prices.json, USD per million input, cached-input, cache-write and output
 * tokens, with each model's output limit), which a file of the same shape (`--model-prices FILE`) extends or
 * overrides. A model in neither gets its tokens counted and `cost_usd: null`:
 * berth never guesses a price.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../errors.ts';
import bundled from './prices.json' with { type: 'json' };
import type { ModelTarget } from './providers.ts';
import type { TokenUsage } from './types.ts';

/** Prices of one model, USD per million tokens. */
export interface ModelPrice {
  input: number;
  /** Cache reads; default `input`. */
  cached_input?: number;
  /** Cache writes (Anthropic); default `input`. */
  cache_write?: number;
  output: number;
  /**
   * The most output tokens one call may ask for (the vendor's limit): the output cap the gateway
   * sets, under a budget, on a call that sets none (src/models/gateway.ts).
   */
  max_output_tokens?: number;
}

export interface PriceFile {
  as_of?: string;
  models: Record<string, ModelPrice>;
}

/** Where a cost came from. */
export type CostSource = 'provider' | 'price-table' | 'cache';

export class PriceTable {
  private constructor(
    private readonly models: ReadonlyMap<string, ModelPrice>,
    /** Date of the bundled table (and of an override file, when it gives one). */
    readonly asOf: string,
  ) {}

  /** berth's table, with the models of `overrideFile` over it. */
  static load(overrideFile?: string): PriceTable {
    const models = new Map(Object.entries((bundled as PriceFile).models));
    let asOf = (bundled as PriceFile).as_of ?? 'unknown';
    if (overrideFile) {
      const file = readPriceFile(overrideFile);
      for (const [name, price] of Object.entries(file.models)) models.set(name, price);
      if (file.as_of) asOf = `${asOf}; ${overrideFile}: ${file.as_of}`;
    }
    return new PriceTable(models, asOf);
  }

  /** The price of a model: by `provider/name`, without an Anthropic date suffix, or by name alone. */
  priceOf(target: Pick<ModelTarget, 'provider' | 'name'>): ModelPrice | undefined {
    const name = target.name;
    const undated = name.replace(/-\d{8}$/, '').replace(/-latest$/, '');
    for (const key of [`${target.provider}/${name}`, `${target.provider}/${undated}`, name, undated]) {
      const price = this.models.get(key);
      if (price) return price;
    }
    return undefined;
  }

  /** The most output tokens one call of the model may ask for, when the table says. */
  outputLimit(target: Pick<ModelTarget, 'provider' | 'name'>): number | undefined {
    return this.priceOf(target)?.max_output_tokens;
  }

  /** USD for `usage`, or undefined when the model has no price. */
  cost(target: Pick<ModelTarget, 'provider' | 'name'>, usage: TokenUsage): number | undefined {
    const price = this.priceOf(target);
    if (!price) return undefined;
    const fresh = Math.max(0, usage.inputTokens - usage.cachedTokens - usage.cacheWriteTokens);
    const usd =
      (fresh * price.input +
        usage.cachedTokens * (price.cached_input ?? price.input) +
        usage.cacheWriteTokens * (price.cache_write ?? price.input) +
        usage.outputTokens * price.output) /
      1e6;
    return roundUsd(usd);
  }
}

/** Rounds to 1e-9 USD (away from binary noise). */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

function readPriceFile(path: string): PriceFile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new InputError({ file: path }, `cannot read the price file: ${(error as Error).message}`);
  }
  const models = (value as PriceFile | null)?.models;
  if (typeof models !== 'object' || models === null || Array.isArray(models))
    throw new InputError({ file: path, field: 'models' }, 'expected an object of model name -> prices');
  for (const [name, price] of Object.entries(models)) {
    for (const key of ['input', 'output'] as const) {
      const n = (price as unknown as Record<string, unknown>)?.[key];
      if (typeof n !== 'number' || !(n >= 0))
        throw new InputError(
          { file: path, field: `models.${name}.${key}` },
          'expected a number >= 0 (USD per million tokens)',
        );
    }
    for (const key of ['cached_input', 'cache_write'] as const) {
      const n = (price as unknown as Record<string, unknown>)?.[key];
      if (n !== undefined && (typeof n !== 'number' || !(n >= 0)))
        throw new InputError(
          { file: path, field: `models.${name}.${key}` },
          'expected a number >= 0 (USD per million tokens)',
        );
    }
    const limit = (price as unknown as Record<string, unknown>)?.max_output_tokens;
    if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1))
      throw new InputError(
        { file: path, field: `models.${name}.max_output_tokens` },
        'expected a whole number >= 1 (the most output tokens one call may ask for)',
      );
  }
  return value as PriceFile;
}
