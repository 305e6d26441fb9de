import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more parallel files only adds contention with the database and the spawned servers.
    maxWorkers: 2,
    // In CI a JSON report as well, from which .ci/run prints the plain 'N passed, N failed' closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
  },
});
