import type { Page, PageRequest, Session, SessionDetail, StateValue } from '@mci/protocol';
import { decodeOutputValue, encodeOutputValue } from '@mci/protocol';
import type { Connection } from './connection.ts';

/** Options of {@link SessionsApi.set}. */
export interface StateSetOptions {
  /** The entry expires this many ms after the write. @default never */
  ttlMs?: number;
  /** Write only if the key is at this version (0: absent), else `ClientError` `VERSION_CONFLICT`. */
  ifVersion?: number;
}

/**
 * Sessions and their durable state (`session.*` and `state.*` over the same WebSocket): the caller's
 * own sessions (an operator's: everyone's). Values go and come back decoded from the output encoding,
 * so a `Map` or a `bigint` a program stored reads as one.
 * @see docs/sessions.md
 */
export class SessionsApi {
  readonly #connection: Connection;

  /** @internal Use `client.sessions`. */
  constructor(connection: Connection) {
    this.#connection = connection;
  }

  /**
   * A page of the sessions, newest first (`limit` 1-100, default 50; `cursor`).
   * @throws ClientError `VALIDATION` (a bad cursor or limit).
   */
  list(page: PageRequest = {}): Promise<Page<Session>> {
    return this.#connection.request({ type: 'session.list', ...page }, { retry: true });
  }

  /** One session with its processes and state keys. @throws ClientError `NOT_FOUND`. */
  async get(session: string): Promise<SessionDetail> {
    return (await this.#connection.request({ type: 'session.get', session }, { retry: true })).session;
  }

  /** Deletes a session and its state (its processes stay). @throws ClientError `NOT_FOUND`. */
  async delete(session: string): Promise<void> {
    await this.#connection.request({ type: 'session.delete', session });
  }

  /**
   * One state entry, its `value` decoded. @throws ClientError `NOT_FOUND` (no session, or no such key).
   */
  async getState(session: string, key: string): Promise<StateValue> {
    const { entry } = await this.#connection.request({ type: 'state.get', session, key }, { retry: true });
    return { ...entry, value: decodeOutputValue(entry.value) };
  }

  /**
   * Writes one state entry; resolves with its new version.
   * @throws ClientError `NOT_FOUND`, `VALIDATION`, `VERSION_CONFLICT`, `LIMIT_EXCEEDED`.
   */
  async setState(
    session: string,
    key: string,
    value: unknown,
    options: StateSetOptions = {},
  ): Promise<number> {
    const answer = await this.#connection.request({
      type: 'state.set',
      session,
      key,
      value: encodeOutputValue(value),
      ...options,
    });
    return answer.version;
  }

  /** Deletes one state entry; true when it was there. @throws ClientError `NOT_FOUND`. */
  async deleteState(session: string, key: string): Promise<boolean> {
    return (await this.#connection.request({ type: 'state.delete', session, key })).deleted;
  }
}
