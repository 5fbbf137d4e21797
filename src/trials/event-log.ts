/**
 * An `events.jsonl` file: one event a line, appended and written through as each event
 * happens, so a crashed or killed run leaves every line it emitted before (a line cut by a
 * kill is skipped by readers). Opened without following a link, append-only.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BerthEvent } from './events.ts';

export class EventLog {
  private constructor(private fd: number | undefined) {}

  /** Opens (creating) `path` for appending; its folder is created. */
  static async open(path: string): Promise<EventLog> {
    await mkdir(dirname(path), { recursive: true });
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    return new EventLog(openSync(path, flags, 0o644));
  }

  /** Appends one event as a line. A write error stops the log, never the job. */
  write(event: BerthEvent): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, `${JSON.stringify(event)}\n`);
    } catch {
      this.close();
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {}
  }
}
