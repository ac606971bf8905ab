import { type SpawnedServer, spawnServerProcess } from '@mci/test-support';
import { afterAll } from 'vitest';
import { request } from './http.ts';

/** A JSON body as the tests read it. */
// biome-ignore lint/suspicious/noExplicitAny: tests read bodies field by field.
export type Json = Record<string, any>;

/** A running `mci serve` (the shared {@link SpawnedServer}). */
export type ServeProcess = SpawnedServer;

/**
 * `serve(args, env)` starts `mci serve --port 0 ARGS` in `cwd` through the shared
 * `spawnServerProcess`, `serveClusterNode` one node of a cluster; `http` sends one JSON request. Every server still running after the suite
 * is killed.
 */
export function serveProcesses(cwd: string) {
  const servers = new Set<SpawnedServer>();
  afterAll(() => {
    for (const { child } of servers)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  function serve(args: string[], env: Record<string, string> = {}): ServeProcess {
    const server = spawnServerProcess({ args, env, cwd });
    servers.add(server);
    return server;
  }

  /** `serve` of node `name` of a cluster on the database at `dbUrl`, with `args` added. */
  function serveClusterNode(dbUrl: string, name: string, args: string[] = []): ServeProcess {
    return serve(['--db', dbUrl, '--cluster', '--node', name, ...args]);
  }

  return { serve, serveClusterNode, http: request };
}
