import type { Json } from './serve-process.ts';

export interface Answer {
  status: number;
  body: Json;
}

/** Sends one request to `url` + `path` and reads its JSON body. Rejects when the server does not answer. */
export async function request(url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body !== undefined && {
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}
