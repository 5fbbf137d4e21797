/**
 * `[environment.healthcheck]` (Harbor `BaseEnvironment.run_healthcheck`,
 * Docker HEALTHCHECK semantics): the command runs until it exits 0. During the
 * start period failures do not count and the next try waits
 * `start_interval_sec`; after it, `retries` consecutive failures (each try
 * bounded by `timeout_sec`, `interval_sec` apart) raise `HealthcheckError`.
 */

import type { HealthcheckSpec } from '../../tasks/harbor/steps.ts';
import type { Environment } from '../environment.ts';

/** Harbor's HealthcheckError. */
export class HealthcheckError extends Error {
  override name = 'HealthcheckError';
}

/**
 * Runs a healthcheck in `environment`.
 * @returns the number of tries it took
 * @throws HealthcheckError after `retries` consecutive failures past the start period
 */
export async function runHealthcheck(
  environment: Environment,
  hc: HealthcheckSpec,
  options: { signal?: AbortSignal; sleep?: (ms: number) => Promise<void> } = {},
): Promise<number> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const startPeriodEnd = performance.now() + hc.startPeriodSec * 1000;
  let failures = 0;
  let tries = 0;
  for (;;) {
    if (options.signal?.aborted) throw new HealthcheckError('cancelled');
    const inStartPeriod = performance.now() < startPeriodEnd;
    tries++;
    const run = await environment.exec(hc.command, {
      timeoutSec: hc.timeoutSec,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (run.exitCode === 0) return tries;
    if (inStartPeriod) {
      await sleep(hc.startIntervalSec * 1000);
      continue;
    }
    failures++;
    if (failures >= hc.retries)
      throw new HealthcheckError(
        `Healthcheck failed after ${hc.retries} consecutive retries: ${hc.command}` +
          (run.timedOut ? ` (last try timed out after ${hc.timeoutSec} s)` : ` (exit ${run.exitCode})`),
      );
    await sleep(hc.intervalSec * 1000);
  }
}
