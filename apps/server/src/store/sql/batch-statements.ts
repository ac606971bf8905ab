import { type CompiledQuery, sql } from 'kysely';
import type { Engine, RowsetType } from './engine.ts';
import type { Db } from './tables.ts';

// The statements every write batch is made of, compiled once per engine. Each reads its rows from
// one JSON parameter (an engine's row set), so its text never changes with the number of rows.

/**
 * A run change with every column (absent ones null: unchanged, see `changeRuns`); `cleared` lists the
 * columns set to null (`,status,error,`), which a null alone cannot say.
 */
export const NO_RUN_CHANGE = {
  cleared: ',',
  state: null,
  status: null,
  queued_at: null,
  started_at: null,
  ended_at: null,
  duration_ms: null,
  error: null,
  truncated: null,
  warnings: null,
};

const PROCESS_ROW = {
  pid: 'integer',
  owner: 'text',
  code: 'text',
  lang: 'text',
  ref: 'text',
  created_at: 'text',
  timeout_ms: 'integer',
  memory_limit_mb: 'integer',
  metadata: 'text',
  stream_id: 'text',
  state: 'text',
  status: 'text',
  runs: 'integer',
  idle_since: 'integer',
  node: 'text',
  check: 'text',
  session: 'text',
} as const satisfies Record<string, RowsetType>;

const RUN_ROW = {
  pid: 'integer',
  run: 'integer',
  state: 'text',
  status: 'text',
  queued_at: 'text',
  started_at: 'text',
  ended_at: 'text',
  duration_ms: 'real',
  error: 'text',
  truncated: 'integer',
  warnings: 'text',
} as const satisfies Record<string, RowsetType>;

/** The statements of every batch, compiled once per engine: each takes its rows as one JSON parameter. */
export type Statements = Record<
  | 'putProcesses'
  | 'putRuns'
  | 'changeProcesses'
  | 'changeRuns'
  | 'putOutputs'
  | 'putLogs'
  | 'putEvents'
  | 'putCalls'
  | 'addBytes',
  CompiledQuery
>;

const compiled = new Map<string, Statements>();

/** The {@link Statements} of `engine`, compiled with `db`'s dialect the first time. */
export function statementsOf(db: Db, engine: Engine): Statements {
  let statements = compiled.get(engine.kind);
  if (!statements) {
    statements = compileStatements(db, engine);
    compiled.set(engine.kind, statements);
  }
  return statements;
}

function compileStatements(db: Db, engine: Engine): Statements {
  const rows = <T extends Record<string, RowsetType>>(columns: T) => engine.rowset([], columns as never, 'r');
  const ref = (column: string) => sql.ref(`r.${column}`);
  /** `INSERT INTO table (columns) SELECT ... FROM rows ON CONFLICT (keys) DO UPDATE SET the others`. */
  const upsert = (
    table: 'processes' | 'runs' | 'outputs' | 'logs' | 'events' | 'calls',
    columns: Record<string, RowsetType>,
    keys: string[],
    value: (column: string) => unknown = ref,
    stored: string[] = Object.keys(columns),
  ) =>
    db
      .insertInto(table)
      .columns(stored as never)
      .expression(
        db
          .selectFrom(rows(columns) as never)
          .select(stored.map((column) => sql`${value(column)}`.as(column)) as never)
          // SQLite needs a WHERE before ON CONFLICT in an INSERT ... SELECT (a parsing ambiguity).
          .where(sql<boolean>`true`) as never,
      )
      .onConflict((conflict) =>
        conflict
          .columns(keys as never)
          .doUpdateSet(
            Object.fromEntries(
              stored
                .filter((column) => !keys.includes(column))
                .map((column) => [column, sql.ref(`excluded.${column}`)]),
            ) as never,
          ),
      )
      .compile();
  // A run's fields are only ever set, never cleared, after the run is inserted: absent stays as is.
  const keep = (column: string) =>
    sql`CASE WHEN u.cleared LIKE ${sql.lit(`%,${column},%`)} THEN NULL ELSE coalesce(${sql.ref(`u.${column}`)}, ${sql.ref(`runs.${column}`)}) END`;
  return {
    // A replaced record keeps its `stored_bytes`: its outputs and logs stay.
    putProcesses: upsert('processes', PROCESS_ROW, ['pid']),
    putRuns: upsert('runs', RUN_ROW, ['pid', 'run']),
    changeProcesses: db
      .updateTable('processes')
      .from(
        engine.rowset(
          [],
          {
            pid: 'integer',
            state: 'text',
            status: 'text',
            runs: 'integer',
            idle_since: 'integer',
            node: 'text',
          },
          'u',
        ) as never,
      )
      .set({
        state: sql`u.state`,
        status: sql`u.status`,
        runs: sql`u.runs`,
        idle_since: sql`coalesce(u.idle_since, processes.idle_since)`,
        node: sql`coalesce(u.node, processes.node)`,
      })
      .where(sql<boolean>`processes.pid = u.pid`)
      .compile(),
    changeRuns: db
      .updateTable('runs')
      .from(engine.rowset([], { ...RUN_ROW, cleared: 'text' }, 'u') as never)
      .set(
        Object.fromEntries(
          Object.keys(RUN_ROW)
            .filter((column) => column !== 'pid' && column !== 'run')
            .map((column) => [column, keep(column)]),
        ) as never,
      )
      .where(sql<boolean>`runs.pid = u.pid AND runs.run = u.run`)
      .compile(),
    putOutputs: upsert(
      'outputs',
      { seq: 'integer', pid: 'integer', run: 'integer', json: 'text' },
      ['seq'],
      (column) => (column === 'value' ? engine.bytes(ref('json')) : ref(column)),
      ['seq', 'pid', 'run', 'value'],
    ),
    putLogs: upsert(
      'logs',
      { seq: 'integer', pid: 'integer', run: 'integer', stream: 'text', text: 'text' },
      ['seq'],
    ),
    putEvents: upsert(
      'events',
      {
        seq: 'integer',
        owner: 'text',
        pid: 'integer',
        ref: 'text',
        stream_id: 'text',
        at: 'integer',
        body: 'text',
      },
      ['seq'],
    ),
    putCalls: upsert(
      'calls',
      {
        pid: 'integer',
        run: 'integer',
        position: 'integer',
        body: 'text',
        input_hash: 'text',
        replay: 'text',
      },
      ['pid', 'run', 'position'],
    ),
    addBytes: db
      .updateTable('processes')
      .from(engine.rowset([], { pid: 'integer', bytes: 'integer' }, 'u') as never)
      .set({ stored_bytes: sql`processes.stored_bytes + u.bytes` })
      .where(sql<boolean>`processes.pid = u.pid`)
      .compile(),
  };
}
