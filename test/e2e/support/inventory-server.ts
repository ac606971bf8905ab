import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerOptions } from '@mci/server';

/** A local inventory service for the http tool and sandboxed fetch: `/items/:id`, `/health`, `/slow`. */
export interface InventoryServer {
  url: string;
  /** `127.0.0.1:port`, for `allowNet`. */
  hostPort: string;
  requests: string[];
  /** The server options that give the transcript tools and programs this service as `INVENTORY_URL`. */
  serverOptions: Partial<ServerOptions>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startInventoryServer(): Promise<InventoryServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/health') return json(200, { status: 'healthy' });
    const item = /^\/items\/(\d+)$/.exec(req.url ?? '');
    if (item?.[1] === '42') return json(200, { id: 42, name: 'blue widget', stock: 7 });
    if (item) return json(404, { error: `no item ${item[1]}` });
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const hostPort = `127.0.0.1:${port}`;
  return {
    url,
    hostPort,
    requests,
    serverOptions: { env: { INVENTORY_URL: url }, publicEnv: ['INVENTORY_URL'], allowNet: [hostPort] },
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
