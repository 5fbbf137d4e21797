/**
 * A vitest reporter that writes each test file's seconds, hooks included, for the longest-first
 * order (test/helpers/sequencer.ts reads them from `test/durations.json`). vitest's JSON reporter
 * cannot serve: its per-file `startTime`/`endTime` span the tests alone, so a file whose cases run
 * in `beforeAll` (the tamper corpus: 768 s in CI at d5b7692) was recorded as 2 s and ran last.
 *
 * Writes to the path in `BERTH_DURATIONS_OUT` (nothing when unset): path relative to the root →
 * seconds (one decimal), longest first. CI sets it; `node .ci/record-durations.mjs` copies the
 * result into `test/durations.json`.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export default class DurationsReporter implements Reporter {
  private root = process.cwd();
  private readonly seconds = new Map<string, number>();

  onInit(ctx: Vitest): void {
    this.root = ctx.config.root;
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    // Import and suite callbacks (collect), setup files, then every test and hook.
    const ms = d.setupDuration + d.collectDuration + d.duration;
    this.seconds.set(relative(this.root, module.moduleId), Math.round(ms / 100) / 10);
  }

  onTestRunEnd(): void {
    const out = process.env.BERTH_DURATIONS_OUT;
    if (!out) return;
    const rows = [...this.seconds].sort((a, b) => b[1] - a[1]);
    writeFileSync(out, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
  }
}
