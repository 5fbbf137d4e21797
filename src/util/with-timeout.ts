/**
 * Longest delay one Node timer holds, in seconds: setTimeout takes at most 2^31 - 1 ms and fires
 * at once (after a TimeoutOverflowWarning) for anything longer. Options that end up in a timer
 * are refused above this (exit 2 naming the option).
 */
export const MAX_TIMER_SEC = Math.floor((2 ** 31 - 1) / 1000);

/**
 * Races `promise` against a timer of `seconds` (wall clock). When the timer wins,
 * the returned promise rejects with `make()`; the original promise is not
 * cancelled (its owner stops the work, e.g. by killing the process group). No
 * limit when `seconds` is undefined, not positive or infinite. A delay longer than one Node timer
 * holds (MAX_TIMER_SEC) is waited in steps, so it never fires early.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  seconds: number | undefined,
  make: () => Error,
): Promise<T> {
  if (seconds === undefined || !(seconds > 0) || seconds === Number.POSITIVE_INFINITY) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const end = Date.now() + seconds * 1000;
    const arm = () => {
      const left = end - Date.now();
      if (left <= 0) return reject(make());
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_SEC * 1000));
    };
    timer = setTimeout(arm, Math.min(seconds * 1000, MAX_TIMER_SEC * 1000));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
