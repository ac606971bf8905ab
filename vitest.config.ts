import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
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

// Files about what a whole process shares run in a worker of their own: the OpenTelemetry SDK's
// global provider and its `OTEL_*` variables, and the idle collector (the event loop and the heap of
// the process). Every other fast file shares its worker with the files before it.
const OWN_WORKER = ['**/tracing-embedded.test.ts', '**/idle-collector.test.ts'];

const project = (name: string, root: string) => ({
  extends: true as const,
  test: {
    name,
    root,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', '**/*.test.ts'],
    exclude: [...EXCLUDE, SLOW, ...OWN_WORKER],
    // Workers are reused across files (no fresh module graph per file): starting one and importing
    // the server's modules again for each of 160 files was a quarter of the suite's time.
    isolate: false,
  },
});

/** The `web` project's settings (`name`, and which files: `include`/`exclude`). */
const webProject = (name: string, files: { include?: string[]; exclude?: string[] }) => ({
  extends: true as const,
  test: {
    ...project(name, 'test/web').test,
    ...files,
    globalSetup: ['support/build-console.ts'],
    // Each console file drives its own Chromium and servers: a fresh worker per file.
    isolate: true,
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
    hookTimeout: 60_000,
    // The `mci` programs tests start (serve, run, mcp, the CLI) load the server from TypeScript
    // source; Node's compile cache keeps their compiled code between starts.
    env: {
      NODE_COMPILE_CACHE: fileURLToPath(new URL('node_modules/.cache/node-compile-cache', import.meta.url)),
    },
    projects: [
      project('schema', 'packages/schema'),
      project('tools', 'packages/tools'),
      project('intent-extractor', 'packages/intent-extractor'),
      project('sandbox', 'packages/sandbox'),
      // The sandbox suite again with a fresh isolate per run (`isolation: isolate`; the default is a
      // fresh context per run in an isolate per trust domain).
      {
        extends: true as const,
        test: {
          ...project('slow-sandbox-isolate', 'packages/sandbox').test,
          env: { MCI_ISOLATION: 'isolate' },
        },
      },
      project('protocol', 'packages/protocol'),
      project('client', 'packages/client'),
      project('agent', 'packages/agent'),
      project('check', 'packages/check'),
      project('server', 'apps/server'),
      {
        extends: true as const,
        test: {
          name: 'own-worker',
          root: 'apps/server',
          include: OWN_WORKER,
          exclude: EXCLUDE,
          isolate: true,
        },
      },
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
