import type { Page, PageRequest } from '@mci/protocol';
import { type Kysely, sql, type Transaction } from 'kysely';
import { pageBounds, toPage } from '../paging/cursor.ts';
import { ServerError } from '../processes/server-error.ts';
import type { EngineKind } from '../store/sql/engine.ts';
import { openDatabase } from '../store/sql/sqlite-file.ts';
import type { Database, Db } from '../store/sql/tables.ts';

/** A stored session. Times are ISO 8601. */
export interface SessionRecord {
  id: string;
  owner: string;
  createdAt: string;
  updatedAt: string;
}

/** One live `state` entry: `value` is the output encoding's JSON text, `bytes` its UTF-8 length. */
export interface StateEntry {
  value: string;
  bytes: number;
  /** Counts the writes of the key, from 1. */
  version: number;
  /** ISO 8601, when a `ttlMs` was given. */
  expiresAt?: string;
}

/** What `write` checks besides the version: the byte limits (settings `limits.stateValueBytes`, `limits.stateSessionBytes`). */
export interface StateLimits {
  valueBytes: number;
  sessionBytes: number;
}

/** Options of {@link SessionStore.write}. */
export interface StateWriteOptions {
  /** The entry expires this many ms after the write (a positive integer). @default never */
  ttlMs?: number;
  /** Write only if the key's version is this one (0: the key is absent), else `VERSION_CONFLICT`. */
  ifVersion?: number;
}

/**
 * Sessions and their durable state in the `sessions` and `state` tables of the process database
 * (schema version 12), the same SQL for SQLite and PostgreSQL. Every write is one transaction; a
 * write of one state scope (a session, or a process without one) holds the scope's lock (PostgreSQL:
 * a transaction-level advisory lock; SQLite runs one transaction at a time), so a compare-and-set and
 * the byte limit see every write committed before it. Without a process database the tables live in
 * an in-memory SQLite database.
 */
export class SessionStore {
  readonly #db: Kysely<Database>;
  readonly #engine: EngineKind;
  readonly #limits: StateLimits;
  readonly #close: () => void;

  constructor(db: Kysely<Database>, engine: EngineKind, limits: StateLimits, close: () => void = () => {}) {
    this.#db = db;
    this.#engine = engine;
    this.#limits = limits;
    this.#close = close;
  }

  /** A store in a private in-memory SQLite database (a server without a process database). */
  static async inMemory(limits: StateLimits): Promise<SessionStore> {
    const opened = await openDatabase(':memory:');
    return new SessionStore(opened.kysely, 'sqlite', limits, opened.close);
  }

  /** The byte limits of state values. */
  get limits(): StateLimits {
    return this.#limits;
  }

  /**
   * Session `id` of `owner`: created when new, its `updatedAt` moved when it exists.
   * @throws ServerError `CONFLICT` (path `session`) when another principal owns the id.
   */
  async open(id: string, owner: string, now = Date.now()): Promise<SessionRecord> {
    await this.#db
      .insertInto('sessions')
      .values({ id, owner, created_at: now, updated_at: now })
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet({ updated_at: now }).where('sessions.owner', '=', owner),
      )
      .execute();
    const found = await this.get(id);
    if (!found || found.owner !== owner)
      throw new ServerError('CONFLICT', `session ${id} belongs to another principal; choose another id`, {
        path: 'session',
      });
    return found;
  }

  /** One session, or `undefined`. */
  async get(id: string): Promise<SessionRecord | undefined> {
    const row = await this.#db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * A page of the sessions of `owner` (every one's for `undefined`), newest first.
   * @throws ServerError `VALIDATION` for a bad limit or cursor.
   */
  async list(owner: string | undefined, request: PageRequest): Promise<Page<SessionRecord>> {
    const { limit, after } = pageBounds(request, ['number', 'string']);
    let query = this.#db.selectFrom('sessions').selectAll();
    if (owner !== undefined) query = query.where('owner', '=', owner);
    if (after) {
      const [createdAt, id] = after as [number, string];
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', createdAt),
          eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = toPage(rows, limit, (row) => [row.created_at, row.id]);
    return { ...page, items: page.items.map(toRecord) };
  }

  /** Deletes a session and its state (its processes stay, naming it). */
  async delete(id: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await this.#lock(trx, id);
      await trx.deleteFrom('state').where('scope', '=', id).execute();
      await trx.deleteFrom('sessions').where('id', '=', id).execute();
    });
  }

  /** The live entry of `key` in `scope`, or `undefined` (absent or expired). */
  async read(scope: string, key: string, now = Date.now()): Promise<StateEntry | undefined> {
    return readEntry(this.#db, scope, key, now);
  }

  /**
   * Writes `value` (output-encoded JSON text) as `key` of `scope`, in one transaction.
   * @returns the key's new version.
   * @throws ServerError `VERSION_CONFLICT` when `ifVersion` is not the key's version (0 for an absent
   * key), `LIMIT_EXCEEDED` past the value or scope byte limit.
   */
  async write(
    scope: string,
    key: string,
    value: string,
    options: StateWriteOptions = {},
    now = Date.now(),
  ): Promise<{ version: number }> {
    const bytes = Buffer.byteLength(value);
    if (bytes > this.#limits.valueBytes)
      throw new ServerError(
        'LIMIT_EXCEEDED',
        `state value of "${key}" is ${bytes} bytes encoded; at most ${this.#limits.valueBytes} (limits.stateValueBytes)`,
        { path: 'value' },
      );
    return this.#db.transaction().execute(async (trx) => {
      await this.#lock(trx, scope);
      const current = await trx
        .selectFrom('state')
        .select(['version', 'bytes', 'expires_at'])
        .where('scope', '=', scope)
        .where('key', '=', key)
        .executeTakeFirst();
      const live = current && (current.expires_at === null || current.expires_at > now) ? current : undefined;
      const { ifVersion } = options;
      if (ifVersion !== undefined && ifVersion !== (live?.version ?? 0))
        throw new ServerError(
          'VERSION_CONFLICT',
          `state "${key}" is at version ${live?.version ?? 0}, not ${ifVersion}: read it again and retry`,
          { path: 'ifVersion' },
        );
      const used = await trx
        .selectFrom('state')
        .select((eb) => eb.fn.sum<number | string | null>('bytes').as('total'))
        .where('scope', '=', scope)
        .where('key', '!=', key)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
      const total = Number(used?.total ?? 0) + bytes;
      if (total > this.#limits.sessionBytes)
        throw new ServerError(
          'LIMIT_EXCEEDED',
          `state of this session would hold ${total} bytes; at most ${this.#limits.sessionBytes} (limits.stateSessionBytes)`,
          { path: 'value' },
        );
      // Versions keep counting over an expired entry, so a compare-and-set read before it expired fails.
      const version = (current?.version ?? 0) + 1;
      const row = {
        value,
        bytes,
        version,
        expires_at: options.ttlMs === undefined ? null : now + options.ttlMs,
        updated_at: now,
      };
      await trx
        .insertInto('state')
        .values({ scope, key, ...row })
        .onConflict((conflict) => conflict.columns(['scope', 'key']).doUpdateSet(row))
        .execute();
      await trx.updateTable('sessions').set({ updated_at: now }).where('id', '=', scope).execute();
      return { version };
    });
  }

  /**
   * Deletes `key` of `scope`; true when a live entry was there. The row stays, expired, until
   * retention sweeps it, so the key's version keeps counting (a compare-and-set read before the
   * delete fails after a new write).
   */
  async remove(scope: string, key: string, now = Date.now()): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      // Under the scope's lock, so a compare-and-set under way sees the delete or comes before it.
      await this.#lock(trx, scope);
      const result = await trx
        .updateTable('state')
        .set({ expires_at: now, updated_at: now })
        .where('scope', '=', scope)
        .where('key', '=', key)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  /** The live keys of `scope` that start with `prefix`, in key order, with their sizes and versions. */
  async entries(
    scope: string,
    prefix = '',
    now = Date.now(),
  ): Promise<Array<{ key: string; bytes: number; version: number; expiresAt?: string }>> {
    let query = this.#db
      .selectFrom('state')
      .select(['key', 'bytes', 'version', 'expires_at'])
      .where('scope', '=', scope)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    // A range rather than LIKE: no escaping, and it uses the primary key.
    if (prefix !== '') query = query.where('key', '>=', prefix).where('key', '<', `${prefix}\u{10FFFF}`);
    const rows = await query.orderBy('key').execute();
    return rows.map((row) => ({
      key: row.key,
      bytes: row.bytes,
      version: row.version,
      ...(row.expires_at !== null && { expiresAt: new Date(row.expires_at).toISOString() }),
    }));
  }

  /**
   * Retention: deletes expired entries, the state of processes that no longer exist, and sessions
   * idle since before `before` (epoch ms) that have no process left, with their state.
   * @returns how many sessions were deleted.
   */
  async sweep(now: number, before: number): Promise<number> {
    await this.#db.deleteFrom('state').where('expires_at', '<=', now).execute();
    await this.#db
      .deleteFrom('state')
      .where('scope', 'like', 'pid:%')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('processes').select('pid').where(sql<boolean>`'pid:' || processes.pid = state.scope`),
          ),
        ),
      )
      .execute();
    const idle = await this.#db
      .selectFrom('sessions')
      .select('id')
      .where('updated_at', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('processes').select('pid').whereRef('processes.session', '=', 'sessions.id'))),
      )
      .limit(500)
      .execute();
    for (const { id } of idle) await this.delete(id);
    return idle.length;
  }

  /** Releases the in-memory database (nothing for the process database's tables). */
  close(): void {
    this.#close();
  }

  /** Holds `scope`'s write lock until the transaction ends (SQLite: its transactions run one at a time). */
  async #lock(trx: Transaction<Database>, scope: string): Promise<void> {
    if (this.#engine === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext(${scope}))`.execute(trx);
  }
}

async function readEntry(db: Db, scope: string, key: string, now: number): Promise<StateEntry | undefined> {
  const row = await db
    .selectFrom('state')
    .select(['value', 'bytes', 'version', 'expires_at'])
    .where('scope', '=', scope)
    .where('key', '=', key)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row && toEntry(row);
}

function toRecord(row: { id: string; owner: string; created_at: number; updated_at: number }): SessionRecord {
  return {
    id: row.id,
    owner: row.owner,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function toEntry(row: {
  value: string;
  bytes: number;
  version: number;
  expires_at: number | null;
}): StateEntry {
  return {
    value: row.value,
    bytes: row.bytes,
    version: row.version,
    ...(row.expires_at !== null && { expiresAt: new Date(row.expires_at).toISOString() }),
  };
}
