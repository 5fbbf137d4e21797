import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // Trials spawn real processes (git, python, node, docker); keep the 2-core machine responsive.
    maxWorkers: 2,
    restoreMocks: true,
    // Every job folder a test writes is checked against Harbor's models after the test.
    setupFiles: ['test/helpers/harbor-job-check.setup.ts'],
  },
});
