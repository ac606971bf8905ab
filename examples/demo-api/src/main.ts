#!/usr/bin/env node
// The demo API of the example tool file, on 127.0.0.1:DEMO_API_PORT (default 8787; 0 for any free
// port). Prints `demo API listening on URL` once it listens.
import type { AddressInfo } from 'node:net';
import { createDemoApi } from './demo-api.ts';

const port = Number(process.env.DEMO_API_PORT ?? 8787);
if (!Number.isSafeInteger(port) || port < 0 || port > 65535) {
  console.error(`DEMO_API_PORT must be a port number, got ${JSON.stringify(process.env.DEMO_API_PORT)}`);
  process.exit(2);
}
const server = createDemoApi();
server.listen(port, '127.0.0.1', () => {
  console.log(`demo API listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.close());
