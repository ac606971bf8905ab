import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages export `./src/index.ts` under the `@mci/source` condition, so tests run from
// source with no build step (the trick Zod uses with `@zod/source`).
const conditions = ['@mci/source', 'module', 'node', 'development|production'];

// Long stress and soak tests, and the files that start many `mci serve` programs, drive Chromium at
// length or build PostgreSQL clusters, are named `*.slow.test.ts`: they run in the `slow` and
// `slow-web` projects only (`pnpm test:slow`, and CI after `pnpm test`), so the suite a person runs
// often stays fast.
const SLOW = '**/*.slow.test.ts';
const EXCLUDE = ['**/node_modules/**', '**/dist/**'];

const project = (name: string, root: string) => ({
  extends: true as const,
  test: {
    name,
    root,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', '**/*.test.ts'],
    exclude: [...EXCLUDE, SLOW],
  },
});

/** The `web` project's settings (`name`, and which files: `include`/`exclude`). */
const webProject = (name: string, files: { include?: string[]; exclude?: string[] }) => ({
  extends: true as const,
  test: {
    ...project(name, 'test/web').test,
    ...files,
    globalSetup: ['support/build-console.ts'],
    testTimeout: 60_000,
    // Pages update as events arrive; on a busy machine that can take seconds.
    expect: { poll: { timeout: 15_000 } },
  },
});

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@mci/source'] } },
  test: {
    // Most files wait on servers, child processes and PostgreSQL rather than the CPU, so more files
    // than cores run at once (`pnpm test:slow` runs its stress tests one at a time).
    maxWorkers: Math.max(3, availableParallelism()),
    // Generous bounds: a test fails on wrong behaviour, not on a machine busy with other work.
    testTimeout: 60_000,
    passWithNoTests: true,
    hookTimeout: 30_000,
    projects: [
      project('schema', 'packages/schema'),
      project('tools', 'packages/tools'),
      project('intent-extractor', 'packages/intent-extractor'),
      project('sandbox', 'packages/sandbox'),
      // The sandbox suite again with a fresh isolate per run (`isolation: isolate`; the default is a
      // fresh context per run in an isolate per trust domain).
      {
        extends: true as const,
        test: { ...project('slow-sandbox-isolate', 'packages/sandbox').test, env: { MCI_ISOLATION: 'isolate' } },
      },
      project('protocol', 'packages/protocol'),
      project('client', 'packages/client'),
      project('agent', 'packages/agent'),
      project('check', 'packages/check'),
      project('server', 'apps/server'),
      project('e2e', 'test/e2e'),
      // The web console in Chromium: builds apps/web once, then drives pages against real servers.
      webProject('web', { exclude: [...EXCLUDE, SLOW] }),
      // Every other slow file, one at a time (`pnpm test:slow` runs `slow*`).
      {
        extends: true as const,
        test: { name: 'slow', root: '.', include: [SLOW], exclude: [...EXCLUDE, 'test/web/**'] },
      },
      // The console's slow files, with the web project's console build and waits.
      webProject('slow-web', { include: [SLOW], exclude: EXCLUDE }),
    ],
  },
});
