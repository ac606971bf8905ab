import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server, so a test can cut live connections (the server sees
 * its socket close, as on a network failure) and refuse new ones for a while.
 */
export interface TcpProxy {
  /** `127.0.0.1:PORT` of the proxy. */
  hostPort: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Destroys every open connection, both sides. */
  dropAll(): void;
  /** While refusing, new connections are closed at once. */
  refuse(on: boolean): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = tcpConnect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dropAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    hostPort: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    dropAll,
    refuse(on) {
      refusing = on;
    },
    async [Symbol.asyncDispose]() {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
