/** This machine's platform, as installed agents' builds are named. */
import type { Platform } from '../environments/environment.ts';

/** This machine's CPU architecture and C library (the local environment runs agents here). */
export function hostPlatform(): Platform {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
    ?.header;
  return { arch, libc: header?.glibcVersionRuntime ? 'glibc' : 'musl' };
}
