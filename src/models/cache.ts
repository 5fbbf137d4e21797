/**
 * The optional response cache (`--model-cache`): answers keyed by the sha256 of
 * the model and the request (its messages, tools and settings, not whether it is
 * streamed), so a re-run of the same job costs nothing. One JSON file per answer
 * under `<folder>/models/`, written atomically. `berth clean --cache` removes the
 * folder. Only successful, complete answers are stored.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { cacheRoot } from '../util/cache.ts';
import type { ModelAnswer } from './types.ts';

export interface ResponseCache {
  get(key: string): Promise<ModelAnswer | undefined>;
  set(key: string, answer: ModelAnswer): Promise<void>;
}

/** The folder of the model response cache: `models/` in berth's cache root (`berth clean --cache` removes it). */
export function modelCacheDir(): string {
  return join(cacheRoot(), 'models');
}

export class FileResponseCache implements ResponseCache {
  /** Answers stored by this process (seen at once, before their file is written). */
  private readonly memory = new Map<string, ModelAnswer>();

  constructor(readonly dir: string = modelCacheDir()) {}

  private path(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`bad cache key ${key}`);
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  async get(key: string): Promise<ModelAnswer | undefined> {
    const known = this.memory.get(key);
    if (known) return known;
    try {
      const value = JSON.parse(await readFile(this.path(key), 'utf8')) as { answer?: ModelAnswer };
      return value.answer && Array.isArray(value.answer.content) ? value.answer : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, answer: ModelAnswer): Promise<void> {
    this.memory.set(key, answer);
    await writeJsonAtomic(this.path(key), { stored_at: new Date().toISOString(), answer }).catch(() => {});
  }
}
