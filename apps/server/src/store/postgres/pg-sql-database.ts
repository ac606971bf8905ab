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
 * The `prepare`/`exec` surface the conversation store uses, over the Postgres store's bridge: each
 * statement runs at once (after the process store's pending writes), `?` placeholders become `$n`;
 * between `exec('BEGIN')` and `exec('COMMIT')` writes are collected and committed as one transaction
 * (`ROLLBACK` drops them). An `INSERT` returns the new row's numeric `id` as `lastInsertRowid`.
 * @throws StoreError `STORE_UNAVAILABLE` from the bridge when the database does not answer.
 */
export class PgSqlDatabase implements ConversationDatabase {
  readonly #bridge: PgBridge;
  readonly #before: () => void;
  #transaction: PgStatement[] | undefined;

  /** `before` runs ahead of each statement (the process store sends its pending writes). */
  constructor(bridge: PgBridge, before: () => void) {
    this.#bridge = bridge;
    this.#before = before;
  }

  prepare(sql: string) {
    const text = numbered(sql);
    const rows = (params: SQLInputValue[], returning = '') => {
      this.#before();
      return this.#bridge.query(text + returning, params.map(param));
    };
    return {
      run: (...params: SQLInputValue[]) => {
        if (this.#transaction) {
          this.#transaction.push({ sql: text, params: params.map(param) });
          return { lastInsertRowid: 0 };
        }
        if (!/^\s*INSERT\b/i.test(sql)) {
          rows(params);
          return { lastInsertRowid: 0 };
        }
        const id = Number(rows(params, ' RETURNING *')[0]?.id);
        return { lastInsertRowid: Number.isSafeInteger(id) ? id : 0 };
      },
      get: (...params: SQLInputValue[]) => rows(params)[0],
      all: (...params: SQLInputValue[]) => rows(params),
    };
  }

  exec(sql: string): void {
    const command = sql.trim().toUpperCase();
    if (command === 'BEGIN') this.#transaction = [];
    else if (command === 'ROLLBACK') this.#transaction = undefined;
    else if (command === 'COMMIT') {
      const statements = this.#transaction ?? [];
      this.#transaction = undefined;
      this.#before();
      this.#bridge.call(statements, true);
    } else {
      this.#before();
      this.#bridge.call([{ sql, params: [] }]);
    }
  }
}
