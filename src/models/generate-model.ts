/**
 * `berth generate`'s model: the same `-m` names as `berth run` (and, as before, a bare name
 * an OpenAI-compatible server at `--model-base-url` knows), called through a model gateway
 * started for the command, so its calls are retried, counted and priced like a job's.
 */
import { UsageError } from '../errors.ts';
import { Credentials } from './credentials.ts';
import { ModelGateway } from './gateway.ts';
import { PriceTable } from './pricing.ts';
import { findProvider, resolveModel } from './providers.ts';

export interface GenerateModel {
  /** The model name to ask the gateway for (it answers with the target whatever the name). */
  name: string;
  /** The gateway's OpenAI base URL (`.../v1`). */
  baseUrl: string;
  /** The session's token (the client's key). */
  token: string;
  /** Ends the session and stops the gateway; returns the usage line (`model: N tokens in, ...`). */
  close(): Promise<string>;
}

/**
 * Resolves the model and starts its gateway.
 * @throws UsageError for a name that does not resolve, or a missing key
 */
export async function generateModel(options: {
  model: string;
  baseUrl?: string;
  apiKey?: string;
  envFile?: string;
  requestTimeoutSec?: number;
  /** Requests the client keeps in flight (`-n`): the session lets as many run at once. */
  concurrency?: number;
}): Promise<GenerateModel> {
  const slash = options.model.indexOf('/');
  const known = slash > 0 && findProvider(options.model.slice(0, slash)) !== undefined;
  if (!known && !options.baseUrl)
    throw new UsageError(
      `--model ${options.model}: give PROVIDER/NAME (openai/gpt-4o, ...) or the server's base URL with --model-base-url`,
    );
  // A bare name is a server's own model name (the old `--model M --base-url URL`).
  const id = known || slash > 0 ? options.model : `hosted_vllm/${options.model}`;
  const base = Credentials.load(options.envFile);
  const target = resolveModel(id, base.variables(), options.baseUrl);
  const keyVar = target.keyVar ?? 'OPENAI_API_KEY';
  // --api-key, else the provider's variable, else (for a server by URL) OPENAI_API_KEY, as before.
  const key =
    options.apiKey ??
    base.keyFor(target) ??
    (target.sdk === 'openai-compatible' ? base.variables().OPENAI_API_KEY : undefined);
  const credentials = Credentials.of({ ...base.variables(), ...(key ? { [keyVar]: key } : {}) });
  const resolved = { ...target, keyVar };
  if (resolved.needsKey && !credentials.keyFor(resolved))
    throw new UsageError(
      `--model ${options.model}: no key; set ${keyVar}, pass --api-key or --env-file FILE`,
    );
  const gateway = await ModelGateway.start({
    credentials,
    prices: PriceTable.load(),
    socket: false,
    ...(options.requestTimeoutSec !== undefined ? { requestTimeoutSec: options.requestTimeoutSec } : {}),
  });
  const session = gateway.openSession({
    trialName: 'generate',
    model: resolved,
    ...(options.concurrency !== undefined ? { limits: { maxCallsInFlight: options.concurrency } } : {}),
  });
  let closed: Promise<string> | undefined;
  return {
    name: resolved.name,
    baseUrl: session.endpoints().openai,
    token: session.token,
    close: () => {
      closed ??= (async () => {
        const totals = await session.close();
        await gateway.stop();
        const cost =
          totals.costUsd === null
            ? 'cost unknown (no price for the model)'
            : `cost $${totals.costUsd.toFixed(4)}`;
        return `model: ${totals.calls} call(s), ${totals.usage.inputTokens} tokens in, ${totals.usage.outputTokens} out; ${cost}`;
      })();
      return closed;
    },
  };
}
