/** Shared by the environments that install a tool at start (see `ToolInstall`). */
import type { ToolInstall, ToolInstallRecord } from './environment.ts';

/** The record of an install that failed (the environment starts without the tool). */
export function failedInstall(tool: ToolInstall, error: unknown, log: string[]): ToolInstallRecord {
  const message = (error as Error).message ?? String(error);
  const detail = (error as { log?: unknown }).log;
  return {
    home: '',
    platform: { arch: 'x64', libc: 'glibc' },
    installed: false,
    durationSec: 0,
    log: [...log, ...(Array.isArray(detail) ? (detail as string[]) : []), `error: ${message}`],
    error: `installing ${tool.name} ${tool.version} failed: ${message.split('\n')[0]}`,
  };
}
