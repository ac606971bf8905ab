import {
  decodeOutputValue,
  type Page,
  type PageRequest,
  type Session,
  type SessionDetail,
  type StateValue,
} from '@mci/protocol';
import type { Redactor } from '@mci/schema';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import { encodeStateValue } from './process-sessions.ts';
import { checkSessionId, checkStateKey } from './session-id.ts';
import type { SessionStore, StateWriteOptions } from './session-store.ts';

/**
 * Sessions as a principal sees them over HTTP and WebSocket: its own (an operator: everyone's);
 * another principal's session is `NOT_FOUND`, exactly like one that does not exist. Values cross in
 * the output encoding (docs/protocol.md, "Output values").
 */
export class Sessions {
  readonly #store: SessionStore;
  readonly #manager: Pick<ProcessManager, 'list'>;
  readonly #redactor: Redactor | undefined;

  constructor(store: SessionStore, manager: Pick<ProcessManager, 'list'>, redactor?: Redactor) {
    this.#store = store;
    this.#manager = manager;
    this.#redactor = redactor;
  }

  /** A page of the sessions `principal` sees, newest first. @throws ServerError `VALIDATION` (limit, cursor). */
  list(page: PageRequest, principal: Principal): Promise<Page<Session>> {
    return this.#store.list(principal.role === 'operator' ? undefined : principal.id, page);
  }

  /** A session with its newest 100 processes and its state keys. @throws ServerError `NOT_FOUND`. */
  async get(id: string, principal: Principal): Promise<SessionDetail> {
    const session = await this.#visible(id, principal);
    const processes = await this.#manager.list({ session: session.id, limit: 100 }, principal);
    return { ...session, processes: processes.items, state: await this.#store.entries(session.id) };
  }

  /** Deletes a session and its state. @throws ServerError `NOT_FOUND`. */
  async delete(id: string, principal: Principal): Promise<void> {
    const session = await this.#visible(id, principal);
    await this.#store.delete(session.id);
  }

  /** One state entry, its value in the output encoding. @throws ServerError `NOT_FOUND`, `VALIDATION`. */
  async getState(id: string, key: string, principal: Principal): Promise<StateValue> {
    const session = await this.#visible(id, principal);
    checkStateKey(key);
    const entry = await this.#store.read(session.id, key);
    if (!entry) throw new ServerError('NOT_FOUND', `session ${id} has no state "${key}"`, { path: 'key' });
    return {
      key,
      value: JSON.parse(entry.value),
      version: entry.version,
      ...(entry.expiresAt !== undefined && { expiresAt: entry.expiresAt }),
    };
  }

  /**
   * Writes one state entry (`value` in the output encoding).
   * @throws ServerError `NOT_FOUND`, `VALIDATION`, `VERSION_CONFLICT`, `LIMIT_EXCEEDED`.
   */
  async setState(
    id: string,
    key: string,
    value: unknown,
    options: StateWriteOptions,
    principal: Principal,
  ): Promise<{ key: string; version: number }> {
    const session = await this.#visible(id, principal);
    checkStateKey(key);
    let decoded: unknown;
    try {
      decoded = decodeOutputValue(value);
    } catch (error) {
      throw new ServerError(
        'VALIDATION',
        `value is not in the output encoding (docs/protocol.md, "Output values"): ${(error as Error).message}`,
        { path: 'value' },
      );
    }
    const { version } = await this.#store.write(
      session.id,
      key,
      encodeStateValue(decoded, this.#redactor),
      options,
    );
    return { key, version };
  }

  /** Deletes one state entry. @throws ServerError `NOT_FOUND`, `VALIDATION`. */
  async deleteState(
    id: string,
    key: string,
    principal: Principal,
  ): Promise<{ key: string; deleted: boolean }> {
    const session = await this.#visible(id, principal);
    checkStateKey(key);
    return { key, deleted: await this.#store.remove(session.id, key) };
  }

  async #visible(id: string, principal: Principal): Promise<Session> {
    checkSessionId(id);
    const session = await this.#store.get(id);
    if (!session || (principal.role !== 'operator' && session.owner !== principal.id))
      throw new ServerError('NOT_FOUND', `session ${id} not found`, { path: 'session' });
    return session;
  }
}
