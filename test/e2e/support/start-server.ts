import { createServer, type MciServer, type ServerOptions } from '@mci/server';
import { examplePath } from '@mci/test-support';

/** The transcript tool file (text, file, cli and http tools). */
export const TRANSCRIPT_TOOLS = examplePath('transcripts', 'tools.mci.yaml');

/** Starts a real server on 127.0.0.1, port 0, with the transcript tools and silent logs. */
export function startServer(options: Partial<ServerOptions> = {}): Promise<MciServer> {
  return createServer({
    host: '127.0.0.1',
    port: 0,
    file: TRANSCRIPT_TOOLS,
    concurrency: 2,
    logLevel: 'silent',
    ...options,
  });
}

/** fetch against the server with an optional bearer token; parses JSON bodies. */
export async function http(
  server: { url: string },
  method: string,
  path: string,
  options: { body?: unknown; token?: string; raw?: string } = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined || options.raw !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(options.raw !== undefined
      ? { body: options.raw }
      : options.body !== undefined
        ? { body: JSON.stringify(options.body) }
        : {}),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}
