import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { text } from 'node:stream/consumers';

/** One item of the demo API. */
export interface DemoItem {
  id: number;
  name: string;
  [field: string]: unknown;
}

/** The token `POST` asks for: the default of `DEMO_API_TOKEN` in the example tool file. */
export const DEMO_TOKEN = 'demo-token';

/** Largest request body `POST` reads, in bytes. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The demo API, in memory: `GET /` (what it serves), `GET /items`, `GET /items/:id` (404 for an
 * unknown id), `POST /items` with a JSON object (needs `Authorization: Bearer demo-token`; 201 with the
 * item and its new `id`). Every answer is JSON; errors are `{ error }`. Query strings are ignored.
 */
export function createDemoApi(): Server {
  const items: DemoItem[] = [
    { id: 1, name: 'apples', quantity: 6 },
    { id: 2, name: 'bread', quantity: 1 },
  ];
  return createServer((request, response) => {
    route(request, items).then(
      ([status, body]) => send(response, status, body),
      () => send(response, 500, { error: 'internal error' }),
    );
  });
}

async function route(request: IncomingMessage, items: DemoItem[]): Promise<[number, unknown]> {
  const path = new URL(request.url ?? '/', 'http://demo').pathname.replace(/\/+$/, '') || '/';
  if (request.method === 'GET' && path === '/')
    return [200, { routes: ['GET /items', 'GET /items/:id', 'POST /items'] }];
  if (request.method === 'GET' && path === '/items') return [200, items];
  const byId = /^\/items\/(\d+)$/.exec(path);
  if (request.method === 'GET' && byId) {
    const item = items.find(({ id }) => id === Number(byId[1]));
    return item ? [200, item] : [404, { error: `no item ${byId[1]}` }];
  }
  if (request.method === 'POST' && path === '/items') return create(request, items);
  return [404, { error: `no route ${request.method} ${path}` }];
}

async function create(request: IncomingMessage, items: DemoItem[]): Promise<[number, unknown]> {
  if (request.headers.authorization !== `Bearer ${DEMO_TOKEN}`)
    return [401, { error: `send Authorization: Bearer ${DEMO_TOKEN}` }];
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES)
    return [413, { error: `the body is over ${MAX_BODY_BYTES} bytes` }];
  let data: unknown;
  try {
    data = JSON.parse(await text(request));
  } catch {
    return [400, { error: 'the body is not JSON' }];
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return [400, { error: 'the body must be a JSON object' }];
  const item: DemoItem = { name: '', ...data, id: Math.max(0, ...items.map(({ id }) => id)) + 1 };
  items.push(item);
  return [201, item];
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
