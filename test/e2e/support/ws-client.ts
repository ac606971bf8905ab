import {
  type ClientMessage,
  type ErrorMessage,
  type ReplyMessage,
  type ServerEvent,
  type ServerMessage,
  ServerMessageSchema,
} from '@mci/protocol';
import WebSocket from 'ws';

type Outgoing = {
  [K in ClientMessage['type']]: Omit<Extract<ClientMessage, { type: K }>, 'id'>;
}[ClientMessage['type']];

/**
 * A plain `ws` test client: every message from the server is checked against the protocol schema
 * (a non-conforming message fails the test), kept in order, and can be awaited.
 */
export class TestClient {
  readonly messages: ServerMessage[] = [];
  readonly socket: WebSocket;
  closeCode: number | undefined;
  private nextId = 1;
  private waiters: Array<() => void> = [];
  readonly closed: Promise<number>;
  protocolErrors: string[] = [];

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      const parsed = ServerMessageSchema.safeParse(JSON.parse(data.toString()));
      if (!parsed.success)
        this.protocolErrors.push(`${data.toString().slice(0, 300)}: ${parsed.error.message}`);
      else this.messages.push(parsed.data);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        for (const wake of this.waiters.splice(0)) wake();
        resolve(code);
      }),
    );
  }

  /** Opens a connection and waits for the server's `hello`. */
  static async open(url: string, options: { token?: string; query?: boolean } = {}): Promise<TestClient> {
    const target = options.token && options.query ? `${url}?token=${encodeURIComponent(options.token)}` : url;
    const headers =
      options.token && !options.query ? { Authorization: `Bearer ${options.token}` } : undefined;
    const socket = new WebSocket(target, headers ? { headers } : {});
    const client = new TestClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`upgrade refused: ${res.statusCode}`)),
      );
    });
    await client.waitFor((m) => m.type === 'hello');
    return client;
  }

  /** Sends a raw text frame. */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Sends a request with a fresh id and resolves with its reply or error. */
  async request(message: Outgoing): Promise<ReplyMessage | ErrorMessage> {
    const id = this.nextId++;
    const from = this.messages.length;
    this.socket.send(JSON.stringify({ ...message, id }));
    return (await this.waitFor((m) => (m.type === 'reply' || m.type === 'error') && m.id === id, from)) as
      | ReplyMessage
      | ErrorMessage;
  }

  /** Like {@link request}, failing on an error reply. */
  async ok<T extends ClientMessage['type']>(
    message: Outgoing & { type: T },
  ): Promise<Extract<ReplyMessage, { request: T }>> {
    const reply = await this.request(message);
    if (reply.type === 'error') throw new Error(`${message.type} failed: ${reply.code} ${reply.message}`);
    return reply as Extract<ReplyMessage, { request: T }>;
  }

  /** Resolves with the first message (from `from`) matching `predicate`, waiting as long as needed. */
  async waitFor(
    predicate: (message: ServerMessage) => boolean,
    from = 0,
    timeoutMs = 30_000,
  ): Promise<ServerMessage> {
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
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the `process` event that shows `pid` idle (after `from`). */
  waitIdle(pid: number, from = 0) {
    return this.waitFor((m) => m.type === 'process' && m.pid === pid && m.state === 'idle', from) as Promise<
      Extract<ServerEvent, { type: 'process' }>
    >;
  }

  /** Every event received (messages with a seq), in arrival order. */
  events(): ServerEvent[] {
    return this.messages.filter((m): m is ServerEvent => 'seq' in m && m.type !== 'hello');
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
