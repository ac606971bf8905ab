import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the test server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query string, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A handler may answer through `res`; the request body is already read into `req.body`. */
export type TestHandler = (req: RecordedRequest, res: ServerResponse) => unknown;

/** A real `node:http` server on 127.0.0.1, port 0, recording every request. Dispose to close it. */
export interface HttpTestServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: RecordedRequest[];
  /** Requests per path (without query). */
  count(path: string): number;
}

/** Starts a server whose routes map a path (no query) to a handler; other paths answer 404. */
export async function startHttpServer(routes: Record<string, TestHandler>): Promise<HttpTestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(recorded);
    const handler = routes[(req.url ?? '').split('?')[0] ?? ''];
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${req.url}`);
      return;
    }
    try {
      await handler(recorded, res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (path) => requests.filter((r) => r.url.split('?')[0] === path).length,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers JSON. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
}

/** Answers with what arrived: `{method, url, headers, body}` as JSON. */
export const echo: TestHandler = (req, res) =>
  sendJson(res, 200, { method: req.method, url: req.url, headers: req.headers, body: req.body });
