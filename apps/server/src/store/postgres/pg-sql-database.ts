import type { SQLInputValue } from 'node:sqlite';
import type { ConversationDatabase } from '../../chat/conversation-store.ts';
import type { PgBridge } from './pg-bridge.ts';
import type { PgParam, PgStatement } from './pg-protocol.ts';

/** `?` placeholders as Postgres `$n` ones. */
export const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const param = (value: SQLInputValue): PgParam => {
  if (typeof value === 'bigint') return Number(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return value;
};

/**
 * The conversation store's database over the Postgres store's bridge: each statement runs after the
 * process store's pending writes, `?` placeholders become `$n`.
 * @throws StoreError `STORE_UNAVAILABLE` from the bridge when the database does not answer.
 */
export class PgSqlDatabase implements ConversationDatabase {
  readonly #bridge: PgBridge;
  readonly #before: () => void;

  /** `before` runs ahead of each statement (the process store sends its pending writes). */
  constructor(bridge: PgBridge, before: () => void) {
    this.#bridge = bridge;
    this.#before = before;
  }

  query(sql: string, params: SQLInputValue[]): Promise<Array<Record<string, unknown>>> {
    this.#before();
    return this.#bridge.query(numbered(sql), params.map(param));
  }

  async transaction(statements: Array<{ sql: string; params: SQLInputValue[] }>): Promise<void> {
    this.#before();
    const numberedStatements: PgStatement[] = statements.map(({ sql, params }) => ({
      sql: numbered(sql),
      params: params.map(param),
    }));
    await this.#bridge.call(numberedStatements, true);
  }
}
