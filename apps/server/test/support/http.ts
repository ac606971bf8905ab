import type { Json } from './serve-process.ts';

export interface Answer {
  status: number;
  body: Json;
}

/**
 * Sends one request to `url` + `path` (with `token` as its bearer token) and reads its JSON body.
 * Rejects when the server does not answer.
 */
export async function request(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
      ...(token !== undefined && { Authorization: `Bearer ${token}` }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}
