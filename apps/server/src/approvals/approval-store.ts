import type { Approval, ApprovalState } from '@mci/protocol';
import type { Kysely, Selectable } from 'kysely';
import type { StoredCall } from '../processes/process-store.ts';
import type { EngineKind } from '../store/sql/engine.ts';
import { onLiveConnection } from '../store/sql/postgres-errors.ts';
import type { ApprovalsTable, Database } from '../store/sql/tables.ts';
import type { PolicyRule } from './policy.ts';

/** How much of a run's outputs and logs its earlier attempts delivered (a resumed run skips them). */
export interface Delivered {
  outputs: number;
  /** Characters of stdout and stderr. */
  stdout: number;
  stderr: number;
  /** `tool` events. */
  tools: number;
  /** Files made with `output.file()` (absent in logs stored before files existed: none). */
  files?: number;
}

/** What a resumed run replays: its calls by position (the audit's records), and what it delivered. */
export interface Replay {
  calls: StoredCall[];
  delivered: Delivered;
  /** Decided approvals of the run by call position. */
  decided: Map<number, Approval>;
}

/** A filter of {@link ApprovalStore.list}; `owner` limits it to one principal's approvals. */
export interface ApprovalFilter {
  state?: ApprovalState;
  pid?: number;
  owner?: string;
  /** Only approvals with a lower id (keyset paging: the last id of the page before). */
  beforeId?: string;
  limit: number;
}

const toApproval = (row: Selectable<ApprovalsTable>): Approval => ({
  id: row.id,
  pid: row.pid,
  run: row.run,
  principal: row.principal,
  kind: row.kind as Approval['kind'],
  ...(row.tool !== null && { tool: row.tool }),
  ...(row.input !== null && { input: JSON.parse(row.input) }),
  ...(row.method !== null && { method: row.method }),
  ...(row.url !== null && { url: row.url }),
  position: row.position,
  state: row.state as ApprovalState,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  ...(row.decided_at !== null && { decidedAt: row.decided_at }),
  ...(row.decided_by !== null && { decidedBy: row.decided_by }),
  ...(row.reason !== null && { reason: row.reason }),
});

/**
 * Approvals, what suspended runs delivered and the policy rules, in the process database (SQLite or
 * PostgreSQL, through the store's Kysely connection). Every change of an approval's state is one
 * conditional `UPDATE ... WHERE state = 'pending'`, so of two deciders racing (two requests, two
 * cluster nodes) exactly one wins. On PostgreSQL the queries of the sweep (expiry, unresumed
 * approvals, the rules) pass over a connection the database ended ({@link onLiveConnection}).
 */
export class ApprovalStore {
  readonly #db: Kysely<Database>;
  readonly #engine: EngineKind;

  /** @param engine the engine behind `db`. @default 'sqlite' */
  constructor(db: Kysely<Database>, engine: EngineKind = 'sqlite') {
    this.#db = db;
    this.#engine = engine;
  }

  /** Runs one query of the sweep, on PostgreSQL on a live connection of the pool. */
  #sweepQuery<T>(query: () => Promise<T>): Promise<T> {
    return this.#engine === 'postgres' ? onLiveConnection(query) : query();
  }

  /**
   * Stores a new pending approval together with the delivered counts of its run, in one transaction
   * (the run's calls are in the process store's `calls`, committed before).
   */
  async suspend(approval: Approval, delivered: Delivered): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('approvals')
        .values({
          id: approval.id,
          pid: approval.pid,
          run: approval.run,
          principal: approval.principal,
          kind: approval.kind,
          tool: approval.tool ?? null,
          input: approval.input === undefined ? null : JSON.stringify(approval.input),
          method: approval.method ?? null,
          url: approval.url ?? null,
          position: approval.position,
          state: approval.state,
          created_at: approval.createdAt,
          expires_at: approval.expiresAt,
          decided_at: null,
          decided_by: null,
          reason: null,
        })
        .execute();
      const row = { pid: approval.pid, run: approval.run, delivered: JSON.stringify(delivered) };
      await trx
        .insertInto('run_delivered')
        .values(row)
        .onConflict((c) => c.columns(['pid', 'run']).doUpdateSet({ delivered: row.delivered }))
        .execute();
    });
  }

  /**
   * What run `run` of process `pid` delivered and which of its approvals were decided, for its resume
   * (nothing delivered when it never suspended); its calls come from the process store.
   */
  async replayOf(pid: number, run: number): Promise<Omit<Replay, 'calls'>> {
    const row = await this.#db
      .selectFrom('run_delivered')
      .select(['delivered'])
      .where('pid', '=', pid)
      .where('run', '=', run)
      .executeTakeFirst();
    const decided = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('pid', '=', pid)
      .where('run', '=', run)
      .where('state', '<>', 'pending')
      .execute();
    return {
      delivered: row ? JSON.parse(row.delivered) : { outputs: 0, stdout: 0, stderr: 0, tools: 0 },
      decided: new Map(decided.map((approval) => [approval.position, toApproval(approval)])),
    };
  }

  async get(id: string): Promise<Approval | undefined> {
    const row = await this.#db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toApproval(row);
  }

  /** Approvals matching `filter`, newest first (ids grow with time), at most `filter.limit`. */
  async list(filter: ApprovalFilter): Promise<Approval[]> {
    let query = this.#db.selectFrom('approvals').selectAll();
    if (filter.state !== undefined) query = query.where('state', '=', filter.state);
    if (filter.pid !== undefined) query = query.where('pid', '=', filter.pid);
    if (filter.owner !== undefined) query = query.where('principal', '=', filter.owner);
    if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map(toApproval);
  }

  /** Ids of the pending approvals of process `pid`. */
  async pendingOf(pid: number): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('approvals')
      .select('id')
      .where('pid', '=', pid)
      .where('state', '=', 'pending')
      .orderBy('id')
      .execute();
    return rows.map((row) => row.id);
  }

  /**
   * Decides pending approval `id`.
   * @returns the approval as decided, or undefined when it was not pending (someone decided first).
   */
  async decide(
    id: string,
    state: 'approved' | 'denied',
    by: string,
    reason: string | undefined,
  ): Promise<Approval | undefined> {
    const row = await this.#db
      .updateTable('approvals')
      .set({ state, decided_at: new Date().toISOString(), decided_by: by, reason: reason ?? null })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    return row && toApproval(row);
  }

  /**
   * Takes on resuming the process of decided approval `id`: true for exactly one caller (of every
   * node), false once taken.
   */
  async claimResume(id: string): Promise<boolean> {
    const row = await this.#db
      .updateTable('approvals')
      .set({ resumed: 1 })
      .where('id', '=', id)
      .where('resumed', '=', 0)
      .where('state', 'in', ['approved', 'denied', 'expired'])
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Decided approvals decided before `before` whose process nobody took on resuming (the node that
   * decided stopped in between).
   */
  async unresumed(before: Date): Promise<Approval[]> {
    const rows = await this.#sweepQuery(() =>
      this.#db
        .selectFrom('approvals')
        .selectAll()
        .where('resumed', '=', 0)
        .where('state', 'in', ['approved', 'denied', 'expired'])
        .where('decided_at', '<', before.toISOString())
        .orderBy('id')
        .limit(100)
        .execute(),
    );
    return rows.map(toApproval);
  }

  /**
   * Expires the pending approvals whose time is over; returns them. When an answer is lost after the
   * commit, the query sent again returns fewer: the others are resumed as {@link ApprovalStore.unresumed}.
   */
  async expireDue(now: Date): Promise<Approval[]> {
    const rows = await this.#sweepQuery(() =>
      this.#db
        .updateTable('approvals')
        .set({ state: 'expired', decided_at: now.toISOString() })
        .where('state', '=', 'pending')
        .where('expires_at', '<=', now.toISOString())
        .returningAll()
        .execute(),
    );
    return rows.map(toApproval);
  }

  /**
   * Cancels the pending approvals of process `pid` (it was killed, or its run ended otherwise).
   * @returns those that were pending.
   */
  async cancelPending(pid: number, by: string | undefined): Promise<Approval[]> {
    const rows = await this.#db
      .updateTable('approvals')
      .set({ state: 'canceled', decided_at: new Date().toISOString(), decided_by: by ?? null, resumed: 1 })
      .where('pid', '=', pid)
      .where('state', '=', 'pending')
      .returningAll()
      .execute();
    return rows.map(toApproval);
  }

  /** The rules stored at run time, or undefined when none were (the config file's apply). */
  async readPolicies(): Promise<{ rules: PolicyRule[]; updatedAt: string; updatedBy: string } | undefined> {
    const row = await this.#sweepQuery(() =>
      this.#db.selectFrom('policies').selectAll().where('name', '=', 'current').executeTakeFirst(),
    );
    return row && { rules: JSON.parse(row.rules), updatedAt: row.updated_at, updatedBy: row.updated_by };
  }

  async writePolicies(rules: readonly PolicyRule[], by: string): Promise<string> {
    const row = {
      name: 'current',
      rules: JSON.stringify(rules),
      updated_at: new Date().toISOString(),
      updated_by: by,
    };
    await this.#db
      .insertInto('policies')
      .values(row)
      .onConflict((c) =>
        c.column('name').doUpdateSet({ rules: row.rules, updated_at: row.updated_at, updated_by: by }),
      )
      .execute();
    return row.updated_at;
  }
}
