/**
 * The part of the WebSocket API the client uses: the browser's `WebSocket` and the `ws` package's
 * both have it (`onopen`, `onmessage`, `onclose`, `onerror`, `send`, `close`, `readyState`).
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/**
 * Opens a WebSocket to `url` presenting `token`. The default ({@link defaultSocketFactory}) uses the
 * `ws` package in Node (token in the `Authorization` header) and the global `WebSocket` elsewhere
 * (token as `?token=`, since browsers cannot set headers).
 */
export type SocketFactory = (
  url: string,
  token: string | undefined,
) => WebSocketLike | Promise<WebSocketLike>;

/** `readyState` of an open socket (the same in every WebSocket implementation). */
export const OPEN = 1;

const isNode =
  typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';

let wsModule: Promise<typeof import('ws')> | undefined;

/**
 * The `ws` package (Node): the token goes in the `Authorization` header, which Node's global
 * `WebSocket` cannot set.
 */
export const nodeSocketFactory: SocketFactory = async (url, token) => {
  wsModule ??= import('ws');
  const { WebSocket } = await wsModule;
  const socket = new WebSocket(
    url,
    token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
  );
  return socket as unknown as WebSocketLike;
};

/** The global `WebSocket` (browsers, Deno, Node 22+): the token goes in the URL as `?token=`. */
export const globalSocketFactory: SocketFactory = (url, token) => {
  const Global = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (Global === undefined) throw new Error('no global WebSocket here: pass `socketFactory` to connect()');
  return new Global(token === undefined ? url : withTokenQuery(url, token));
};

/** {@link nodeSocketFactory} in Node, {@link globalSocketFactory} elsewhere. */
export const defaultSocketFactory: SocketFactory = isNode ? nodeSocketFactory : globalSocketFactory;

/** `url` with `?token=` (or `&token=`) appended: how browsers authenticate. */
export function withTokenQuery(url: string, token: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('token', token);
  return parsed.toString();
}

/** The HTTP status a failed upgrade answered with, when the error says (`ws`: "Unexpected server response: 401"). */
export function upgradeStatus(error: unknown): number | undefined {
  const message =
    (error as { message?: unknown })?.message ?? (error as { error?: { message?: unknown } })?.error?.message;
  const match = typeof message === 'string' ? /Unexpected server response: (\d{3})/.exec(message) : null;
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** A readable description of a WebSocket error event (`ws` error events carry `.error` or `.message`). */
export function describeSocketError(event: unknown): string {
  const candidate = (event as { error?: unknown })?.error ?? event;
  const message = (candidate as { message?: unknown })?.message;
  return typeof message === 'string' && message !== '' ? message : 'WebSocket error';
}
