/**
 * Bounded bombs for the resource-limit tests: each stops at a limit the test sets small
 * (64 processes, 128 MiB), never at the host's.
 */

/** Forks until a fork is refused; every child sleeps 30 s (so the count only grows). */
export const FORK_BOMB = `python3 -c "
import os, time
while True:
    if os.fork() == 0:
        time.sleep(30); os._exit(0)
"`;

/** Allocates 512 MiB at once. */
export const MEMORY_HOG = `python3 -c "a = bytearray(512 * 1024 * 1024)"`;
