import {
  type ClientMessage,
  type ErrorMessage,
  type ReplyMessage,
  type ServerEvent,
  type ServerMessage,
  ServerMessageSchema,
} from '@mci/protocol';
import { TestSocket } from '@mci/test-support';

type Outgoing = {
  [K in ClientMessage['type']]: Omit<Extract<ClientMessage, { type: K }>, 'id'>;
}[ClientMessage['type']];

/**
 * The shared {@link TestSocket} typed by the protocol: every message from the server is checked
 * against the protocol schema (a non-conforming one lands in `protocolErrors`, which the tests
 * assert empty), with typed requests and a few waits the end-to-end tests share.
 */
export class TestClient extends TestSocket<ServerMessage> {
  /** Opens a connection and waits for the server's `hello`. */
  static async open(url: string, options: { token?: string; query?: boolean } = {}): Promise<TestClient> {
    const client = new TestClient(url, { ...options, parse: (m) => ServerMessageSchema.parse(m) });
    await client.ready();
    return client;
  }

  /** Sends a request with a fresh id and resolves with its reply or error. */
  override request(message: Outgoing): Promise<ReplyMessage | ErrorMessage> {
    return super.request(message) as Promise<ReplyMessage | ErrorMessage>;
  }

  /** Like {@link request}, failing on an error reply. */
  async ok<T extends ClientMessage['type']>(
    message: Outgoing & { type: T },
  ): Promise<Extract<ReplyMessage, { request: T }>> {
    const reply = await this.request(message);
    if (reply.type === 'error') throw new Error(`${message.type} failed: ${reply.code} ${reply.message}`);
    return reply as Extract<ReplyMessage, { request: T }>;
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
}
