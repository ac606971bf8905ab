import { connect, type MciClient } from '@mci/client';
import { afterAll, beforeAll } from 'vitest';
import { createServer, type MciServer, type ServerOptions } from '../../src/server.ts';

/** What {@link suiteServer} gives a suite; both are there once its `beforeAll` ran. */
export interface SuiteServer {
  readonly server: MciServer;
  /** A `@mci/client` connected to `server`. */
  readonly client: MciClient;
}

/**
 * An in-process server (port 0, silent logs, an in-memory store, `options` on top) and a
 * `@mci/client` connected to it, shared by one suite: started in `beforeAll`, closed in `afterAll`,
 * then `cleanup` runs (e.g. removing the suite's temporary directory).
 */
export function suiteServer(
  options: Partial<ServerOptions> & { file: string },
  cleanup?: () => void,
): SuiteServer {
  let server: MciServer | undefined;
  let client: MciClient | undefined;
  beforeAll(async () => {
    server = await createServer({ port: 0, logLevel: 'silent', concurrency: 2, ...options });
    client = await connect(server.url);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close({ graceMs: 0 });
    cleanup?.();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the suite server starts in beforeAll');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get client() {
      return started(client);
    },
  };
}
