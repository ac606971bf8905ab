import { request } from 'node:http';

/** An answer read by {@link rawRequest}. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  body: any;
  /** True when the server switched protocols (a WebSocket upgrade was accepted). */
  upgraded: boolean;
}

/**
 * One HTTP request with exactly the headers given (`Host` and `Origin` included, which `fetch`
 * would set itself), over `node:http`. With `upgrade: true` it asks for a WebSocket.
 */
export function rawRequest(
  baseUrl: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string;
    upgrade?: boolean;
  },
): Promise<RawAnswer> {
  const url = new URL(options.path, baseUrl);
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.upgrade) {
    Object.assign(headers, {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    });
  }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? 'GET',
        headers,
        setHost: !('Host' in headers),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, upgraded: false });
        });
      },
    );
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({
        status: res.statusCode ?? 101,
        headers: res.headers,
        text: '',
        body: undefined,
        upgraded: true,
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
