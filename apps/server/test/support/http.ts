import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
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

/** {@link request} bound to `url` and `token`: a client of one principal. */
export function requestsAs(url: string, token: string) {
  return (method: string, path: string, body?: unknown): Promise<Answer> =>
    request(url, method, path, body, token);
}

/** `POST /processes` with `body` as `token`: creates a process (with `block: true`, also runs it to its end). */
export function postProcess(url: string, body: Json, token: string): Promise<Answer> {
  return request(url, 'POST', '/processes', body, token);
}

/**
 * The bodies of every page of `GET path?query` on `url` for `token`, in order: each page must answer
 * 200, and its `nextCursor` (as `&cursor=`) asks for the next until a page carries none.
 */
export async function allPages(url: string, path: string, query: string, token: string): Promise<Json[]> {
  const pages: Json[] = [];
  let cursor: string | undefined;
  do {
    const page = await request(
      url,
      'GET',
      `${path}?${query}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      undefined,
      token,
    );
    expect(page.status).toBe(200);
    pages.push(page.body);
    cursor = page.body.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** Starts `server` (a `node:http` server of the test) on 127.0.0.1 and a free port; resolves with its `http://127.0.0.1:PORT`. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
