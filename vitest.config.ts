import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/helpers/sequencer.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // Trials spawn real processes (git, python, node, docker); keep the 2-core machine responsive.
    maxWorkers: 2,
    restoreMocks: true,
    // Longest files first, from the seconds CI measured (test/durations.json): a fresh clone has no
    // vitest cache, and its fallback (larger files first) left a 138 s file to run alone at the end.
    sequence: { sequencer: DurationSequencer },
    // Every job folder a test writes is checked against Harbor's models after the test.
    setupFiles: ['test/helpers/harbor-job-check.setup.ts'],
  },
});
