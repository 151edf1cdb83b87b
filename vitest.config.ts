import { defineConfig } from 'vitest/config';

/** Files that replace a module with vi.mock need a module graph of their own. */
const NEEDS_ISOLATION = ['test/unit/publish-rollback.test.ts', 'test/unit/open-once.test.ts'];

export default defineConfig({
  test: {
    // Limits that catch a hang, not a slow machine: the suite must pass while
    // other CPU-heavy jobs share the two cores (a test that took 67 s on a
    // busy machine failed at the 60 s this used to be). No test asserts time.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // End-to-end tests spawn the real binary; two cores, so keep the pool small.
    maxWorkers: 2,
    setupFiles: ['test/helpers/per-file.ts'],
    // The run's own TMPDIR, which must be empty at the end (test/global/tmp-root.ts).
    globalSetup: ['test/global/tmp-root.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: NEEDS_ISOLATION,
          // One module graph per worker instead of one per file: loading msw,
          // the fake site and src/ again for each of 60 files cost a fifth of
          // the suite's CPU. Each file makes its own servers and directories;
          // test/helpers/per-file.ts undoes what a file leaves in the process.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: NEEDS_ISOLATION, isolate: true } },
    ],
  },
});
