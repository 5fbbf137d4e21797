/**
 * Races `promise` against a timer of `seconds` (wall clock). When the timer wins,
 * the returned promise rejects with `make()`; the original promise is not
 * cancelled (its owner stops the work, e.g. by killing the process group). No
 * limit when `seconds` is undefined or not positive.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  seconds: number | undefined,
  make: () => Error,
): Promise<T> {
  if (seconds === undefined || !(seconds > 0)) return promise;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(make()), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
