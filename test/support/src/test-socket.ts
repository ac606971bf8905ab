import WebSocket from 'ws';

/** A message's `type` field, if any. */
const typeOf = (message: unknown): unknown => (message as { type?: unknown }).type;

/** Options of {@link openTestSocket} and the {@link TestSocket} constructor. */
export interface TestSocketOptions<M> {
  /** A bearer token, sent in the `Authorization` header (or the `token` query with `query`). */
  token?: string;
  /** Send the token as `?token=` instead of a header. @default false */
  query?: boolean;
  /**
   * Checks each parsed message (e.g. a protocol schema's `parse`); a message it throws on is kept in
   * {@link TestSocket.protocolErrors} instead of {@link TestSocket.messages}. @default keeps it as is
   */
  parse?: (message: unknown) => M;
}

/**
 * The WebSocket test client of every suite: a plain `ws` connection to the server whose JSON
 * messages are kept in arrival order and can be awaited; requests get fresh ids and resolve with
 * their `reply` or `error`. `M` is the message type the tests read.
 */
export class TestSocket<M = { type: string }> {
  /** Every message received (that passed `parse`), in arrival order. */
  readonly messages: M[] = [];
  /** Messages `parse` refused: the raw text (first 300 characters) and the reason. */
  readonly protocolErrors: string[] = [];
  readonly socket: WebSocket;
  /** The close code once the connection closed. */
  closeCode: number | undefined;
  /** Resolves with the close code once the connection closed. */
  readonly closed: Promise<number>;
  #nextId = 1;
  #waiters: Array<() => void> = [];

  #opened: Promise<void>;

  /** Connects to `url` (`ws://...`); await {@link ready} before use (or use {@link openTestSocket}). */
  constructor(url: string, options: TestSocketOptions<M> = {}) {
    const { token, query } = options;
    const parse = options.parse ?? ((message: unknown) => message as M);
    const target = token && query ? `${url}?token=${encodeURIComponent(token)}` : url;
    const socket = new WebSocket(
      target,
      token && !query ? { headers: { Authorization: `Bearer ${token}` } } : {},
    );
    this.socket = socket;
    this.#opened = new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`upgrade refused: ${res.statusCode}`)),
      );
    });
    socket.on('message', (data) => {
      const text = data.toString();
      try {
        this.messages.push(parse(JSON.parse(text)));
      } catch (error) {
        this.protocolErrors.push(`${text.slice(0, 300)}: ${(error as Error).message}`);
      }
      this.#wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        this.#wake();
        resolve(code);
      }),
    );
  }

  /**
   * Resolves once the connection is open and the server's `hello` arrived.
   * @throws when the upgrade is refused (the message names the HTTP status) or the socket fails.
   */
  async ready(): Promise<void> {
    await this.#opened;
    await this.waitFor((m) => typeOf(m) === 'hello');
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Sends a raw text frame. */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Sends `message` with a fresh `id` and resolves with the `reply` or `error` of that id. */
  request(message: object): Promise<M> {
    const id = this.#nextId++;
    const from = this.messages.length;
    this.socket.send(JSON.stringify({ ...message, id }));
    return this.waitFor(
      (m) => (typeOf(m) === 'reply' || typeOf(m) === 'error') && (m as { id?: unknown }).id === id,
      from,
    );
  }

  /**
   * Resolves with the first message (from index `from`) matching `predicate`, waiting up to
   * `timeoutMs` (a generous bound for a busy machine).
   * @throws when the connection closes or the time is up (the error lists the last messages).
   */
  async waitFor(predicate: (message: M) => boolean, from = 0, timeoutMs = 30_000): Promise<M> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(from).find(predicate);
      if (found) return found;
      if (this.closeCode !== undefined)
        throw new Error(`connection closed (${this.closeCode}) while waiting`);
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new Error(`timed out waiting; last messages: ${JSON.stringify(this.messages.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Closes the connection and waits for the close. */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * Opens a {@link TestSocket} to `url` (`ws://...`) and resolves once the server's `hello` arrived.
 * @throws when the upgrade is refused (the message names the HTTP status) or the socket fails.
 */
export async function openTestSocket<M = { type: string }>(
  url: string,
  options: TestSocketOptions<M> = {},
): Promise<TestSocket<M>> {
  const client = new TestSocket<M>(url, options);
  await client.ready();
  return client;
}
