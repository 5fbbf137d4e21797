/**
 * An `events.jsonl` file: one event a line, appended and written through as each event
 * happens, so a crashed or killed run leaves every line it emitted before (a line cut by a
 * kill is skipped by readers). Opened without following a link, append-only. Optionally the
 * same events as text, one readable line each, for Harbor's `job.log` / `trial.log`.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BerthEvent } from './events.ts';

/** A file opened for appending, no link followed; a write error closes it, never throws. */
class AppendFile {
  private constructor(private fd: number | undefined) {}

  static async open(path: string): Promise<AppendFile> {
    await mkdir(dirname(path), { recursive: true });
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    return new AppendFile(openSync(path, flags, 0o644));
  }

  write(text: string): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, text);
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

export interface EventLogOptions {
  /** Also write each event as a line of text to this file (`job.log`, `trial.log`). */
  text?: string;
  /** Which events go to the text file (default all). */
  textFilter?: (event: BerthEvent) => boolean;
}

export class EventLog {
  private constructor(
    private readonly json: AppendFile,
    private readonly text: AppendFile | undefined,
    private readonly textFilter: (event: BerthEvent) => boolean,
  ) {}

  /** Opens (creating) `path` for appending, and the text log when asked; their folders are created. */
  static async open(path: string, options: EventLogOptions = {}): Promise<EventLog> {
    const json = await AppendFile.open(path);
    const text = options.text ? await AppendFile.open(options.text).catch(() => undefined) : undefined;
    return new EventLog(json, text, options.textFilter ?? (() => true));
  }

  /** Appends one event as a line (and its text line). A write error stops that file, never the job. */
  write(event: BerthEvent): void {
    this.json.write(`${JSON.stringify(event)}\n`);
    if (this.text && this.textFilter(event)) this.text.write(`${eventText(event)}\n`);
  }

  close(): void {
    this.json.close();
    this.text?.close();
  }
}

const oneLine = (text: string, max = 300) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
};

/**
 * Control characters as visible escapes (`\x1b`): an agent's or a model's text in a log line
 * (or on the terminal, `berth run --debug`) can neither drive the terminal nor start a forged line.
 */
const visible = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it escapes
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/**
 * One event as a line of a text log: `<time> <LEVEL> [<trial>] <what happened>`, in the manner
 * of the log lines Harbor's `job.log` and `trial.log` hold. Always one line, without control
 * characters.
 */
export function eventText(event: BerthEvent): string {
  const trial = 'trial' in event && event.trial ? ` [${event.trial}]` : '';
  const step = 'step' in event && event.step ? ` (step ${event.step})` : '';
  let level = 'INFO';
  let what: string;
  switch (event.type) {
    case 'job-start':
      what = `job ${event.job} started: ${event.n_trials} trial(s), id ${event.job_id}, berth ${event.berth_version}`;
      break;
    case 'job-end':
      what = `job ${event.job} ${event.cancelled ? 'stopped' : 'finished'} in ${event.duration_sec} s: ${event.n_finished}/${event.n_trials} trial(s), ${event.n_resolved} resolved, ${event.n_errors} with an exception`;
      break;
    case 'trial-start':
      what = `trial started: task ${event.task}, attempt ${event.attempt}, agent ${event.agent.name} ${event.agent.version}${event.agent.model ? `, model ${event.agent.model}` : ''}`;
      break;
    case 'trial-end': {
      const reward = event.rewards ? ` reward ${JSON.stringify(event.rewards)}` : '';
      const e = event.exception ? `; ${event.exception.type}: ${oneLine(event.exception.message)}` : '';
      if (event.exception) level = 'WARNING';
      what = `trial ${event.reused ? 'kept from an earlier run' : 'ended'}: ${event.status}${reward} in ${event.duration_sec} s${e}`;
      break;
    }
    case 'phase-start':
      what = `${event.phase}${step} started`;
      break;
    case 'phase-end':
      if (event.exception) level = 'WARNING';
      what = `${event.phase}${step} ended in ${event.duration_sec} s${event.exception ? `: ${event.exception.type}: ${oneLine(event.exception.message)}` : ''}`;
      break;
    case 'model-call':
      if (event.error) level = 'WARNING';
      what = `model call ${event.provider}/${event.model}${step}: ${event.input_tokens} in, ${event.output_tokens} out${event.cost_usd !== null ? `, $${event.cost_usd}` : ''}, ${event.duration_sec} s${event.error ? `: ${oneLine(event.error)}` : ''}`;
      break;
    case 'tool-call':
      what = `tool ${event.name}${step}: ${oneLine(JSON.stringify(event.arguments ?? null), 200)}`;
      break;
    case 'command':
      what = `command${event.phase ? ` (${event.phase})` : ''}${step}: ${oneLine(event.command, 200)} -> ${event.timed_out ? 'timed out' : event.exit_code === null ? 'killed' : `exit ${event.exit_code}`} in ${event.duration_sec} s`;
      break;
    case 'message':
      what = `${event.role} message${step}: ${oneLine(event.text, 200)}`;
      break;
    case 'verdict':
      what = `verdict${step}: ${event.status}${event.rewards ? ` ${JSON.stringify(event.rewards)}` : ''}${event.reason ? ` (${oneLine(event.reason)})` : ''}`;
      break;
    case 'notice':
      level = event.level.toUpperCase();
      what = oneLine(event.message, 1000);
      break;
  }
  return visible(`${event.time} ${level}${trial} ${what}`);
}
