import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { LEASE_LOST, NodeLease } from './pg-node-lease.ts';
import type { ClusterMessage, PgNotice, PgReply, PgRequest, PgStatement } from './pg-protocol.ts';
import { pgEventsQuery } from './pg-reads.ts';

// The Postgres store's worker thread: it owns the `pg` pool and runs requests one after another, in
// the order the main thread posted them, so a read sees every write posted before it. Answers,
// batch acknowledgements and losses go to the parent port.

const { url, poolSize, connectMs } = workerData as {
  url: string;
  poolSize: number;
  connectMs: number;
};

// bigint columns (pids, seqs, epoch ms) stay well below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: connectMs });
// A connection the server ended (restart, pg_terminate_backend) is dropped by the pool; the next
// request opens a new one.
pool.on('error', () => {});

/**
 * SQLSTATE classes after which the same transaction may succeed on a new connection (connection
 * exceptions, the server shutting down or starting, insufficient resources, serialization failures).
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const RETRYABLE_SQLSTATE = /^(08|57P|53|40001|40P01)/;
/** Node's own errors of a connection: `ECONNRESET`, `ECONNREFUSED`, `EPIPE`, `ETIMEDOUT`, ... */
const NODE_ERRNO = /^E[A-Z0-9]+$/;

/**
 * Whether `error` is a failure of the connection rather than of the statements: an SQLSTATE of a
 * retryable class, a Node errno code, or a `pg` error without a code (a connection that ended or
 * timed out).
 */
export const isRetryable = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error instanceof Error && !String(error.message).includes(LEASE_LOST);
  return RETRYABLE_SQLSTATE.test(code) || NODE_ERRNO.test(code);
};

/** A statement with its `$n` parameters written in as literals (quoted by `pg`, bytes as hex). */
function inline(client: pg.PoolClient, { sql, params }: PgStatement): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n) - 1];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new Error(`cannot store the number ${value}`);
      return String(value);
    }
    if (typeof value === 'string') return client.escapeLiteral(value);
    return `'\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'::bytea`;
  });
}

async function run(statements: PgStatement[], transaction: boolean) {
  const client = await pool.connect();
  // A checked-out client whose connection drops between queries emits 'error'; the next query fails.
  const ignore = () => {};
  client.on('error', ignore);
  let broken = false;
  try {
    if (transaction) {
      // The whole transaction in one round trip (the simple-query protocol runs several statements).
      const text = ['BEGIN', ...statements.map((statement) => inline(client, statement)), 'COMMIT'].join(
        ';\n',
      );
      const results = await client.query(text);
      return (Array.isArray(results) ? results : [results]).slice(1, -1).map((result) => result.rows);
    }
    const rows: Array<Array<Record<string, unknown>>> = [];
    for (const { sql, params } of statements) rows.push((await client.query(sql, params)).rows);
    return rows;
  } catch (error) {
    broken = true;
    if (transaction) await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.off('error', ignore);
    client.release(broken);
  }
}

/** Whether the last request failed on its connection (reported once, until one succeeds). */
let failing = false;

/**
 * Runs `statements`, again and again after connection failures (with back-off up to a second) until
 * they succeed or the worker closes: a transaction is all or nothing, so a batch is never half
 * written and never dropped because the database was away. The main thread hears that batches are
 * being retried, and bounds how long its callers wait.
 */
async function runRetrying(statements: PgStatement[], transaction: boolean) {
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      const rows = await run(statements, transaction);
      if (failing) {
        failing = false;
        parentPort!.postMessage({ retrying: null } satisfies PgNotice);
      }
      return rows;
    } catch (error) {
      if (!isRetryable(error) || closing) throw error;
      if (!failing) {
        failing = true;
        const message = error instanceof Error ? error.message || String((error as { code?: unknown }).code) : String(error);
        parentPort!.postMessage({ retrying: message } satisfies PgNotice);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function answer(reply: PgReply) {
  parentPort!.postMessage({ reply } satisfies PgNotice);
}

/** The connection holding the session-level advisory lock that marks the database as in use. */
let holder: pg.Client | undefined;

/**
 * Takes the advisory lock `key` on a connection of its own, exclusive or `shared`; when that connection
 * drops, takes it again. @returns `'ok'`, or the mode another session holds it in.
 */
async function lock(key: number, shared: boolean): Promise<'ok' | 'exclusive' | 'shared'> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectMs });
  client.on('error', () => {});
  await client.connect();
  const take = shared ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock';
  const { rows } = await client.query(`SELECT ${take}($1) AS ok`, [key]);
  if (!rows[0]?.ok) {
    const held = await client.query(
      "SELECT bool_or(mode = 'ExclusiveLock') AS exclusive FROM pg_locks WHERE locktype = 'advisory' AND objid = $1",
      [key],
    );
    await client.end();
    return held.rows[0]?.exclusive ? 'exclusive' : 'shared';
  }
  holder = client;
  client.once('end', () => {
    if (holder !== client) return;
    holder = undefined;
    void relock(key, shared);
  });
  return 'ok';
}

async function relock(key: number, shared: boolean) {
  for (let wait = 100; holder === undefined && !closing; wait = Math.min(wait * 2, 2000)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      if ((await lock(key, shared)) !== 'ok') {
        parentPort!.postMessage({ lockLost: 'another server took the database lock' } satisfies PgNotice);
        return;
      }
    } catch {
      // The database is still away: try again.
    }
  }
}

let closing = false;

// Cluster mode: a connection that LISTENs for committed events (`mci_events`, every node) and for
// requests to this node (`mci_node:NAME`); the rows after the last position delivered are fetched and
// posted to the main thread in order. A poll every second catches up after a reconnection.

/** Rows of the event log fetched per query. */
const EVENT_PAGE = 1000;
let listener: pg.Client | undefined;
let lastPos = 0;
let fetching = false;
let fetchAgain = false;
let poll: NodeJS.Timeout | undefined;

async function listen(node: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectMs });
  client.on('error', () => {});
  await client.connect();
  const channel = client.escapeIdentifier(`mci_node:${node}`);
  await client.query(`LISTEN mci_events; LISTEN mci_surplus; LISTEN ${channel}`);
  client.on('notification', (message) => {
    if (message.channel === 'mci_events') void fetchEvents();
    else if (message.channel === 'mci_surplus') {
      if (message.payload && message.payload !== node) post({ type: 'surplus', node: message.payload });
    } else {
      const request = nodeRequest(message.payload ?? '');
      if (request) post(request);
    }
  });
  client.once('end', () => {
    if (listener !== client || closing) return;
    listener = undefined;
    void relisten(node);
  });
  if (listener === undefined && poll === undefined) {
    const { rows } = await client.query("SELECT value FROM counters WHERE name = 'pos'");
    lastPos = Number(rows[0]?.value ?? 0);
    poll = setInterval(() => void fetchEvents(), 1000);
  }
  listener = client;
  return lastPos;
}

/** A request sent to this node: `kill PID`, `offer NODE SLOTS` or `take PID,PID,...`. */
function nodeRequest(payload: string): ClusterMessage | undefined {
  const [verb, first, second] = payload.split(' ');
  if (verb === 'kill') return { type: 'kill', pid: Number(first) };
  if (verb === 'offer' && first) return { type: 'offer', node: first, slots: Number(second) };
  if (verb === 'take' && first) return { type: 'take', pids: first.split(',').map(Number) };
  return undefined;
}

/** Posts a message for the cluster to the main thread. */
function post(message: ClusterMessage): void {
  parentPort!.postMessage({ cluster: message } satisfies PgNotice);
}

async function relisten(node: string) {
  for (let wait = 100; listener === undefined && !closing; wait = Math.min(wait * 2, 2000)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      await listen(node);
      void fetchEvents();
    } catch {
      // The database is still away: try again.
    }
  }
}

/** Posts every committed event after `lastPos`, a page at a time; one fetch runs at a time. */
async function fetchEvents(): Promise<void> {
  if (fetching) {
    fetchAgain = true;
    return;
  }
  fetching = true;
  try {
    do {
      fetchAgain = false;
      for (;;) {
        const { sql, params } = pgEventsQuery(lastPos, {}, { positions: true, limit: EVENT_PAGE });
        const { rows } = await pool.query(sql, params);
        if (rows.length === 0) break;
        lastPos = Number(rows.at(-1)!.seq);
        post({ type: 'events', rows });
        if (rows.length < EVENT_PAGE) break;
      }
    } while (fetchAgain && !closing);
  } catch {
    // The database is away: the next notification or poll fetches again from lastPos.
  } finally {
    fetching = false;
  }
}
/** This node's lease, once taken. */
let lease: NodeLease | undefined;

async function handle(request: PgRequest): Promise<void> {
  if (request.kind === 'lease') {
    const { name } = request;
    const taken = new NodeLease(pool, name, request.leaseMs, {
      ...(request.cluster && {
        queuedElsewhere: (count: number) => post({ type: 'queuedElsewhere', count }),
      }),
      expired: (names, adopted) => {
        if (adopted.length > 0) post({ type: 'adopted', adopted });
        parentPort!.postMessage({ nodesExpired: names, adopted: adopted.length } satisfies PgNotice);
      },
      lost: () => parentPort!.postMessage({ leaseLost: name } satisfies PgNotice),
    });
    try {
      const ok = await taken.acquire(request.renewMs);
      if (ok) lease = taken;
      answer({ id: request.id, rows: [[{ ok }]] });
    } catch (cause) {
      answer({ id: request.id, error: { message: cause instanceof Error ? cause.message : String(cause) } });
    }
    return;
  }
  if (request.kind === 'listen') {
    try {
      answer({ id: request.id, rows: [[{ lastPos: await listen(request.node) }]] });
    } catch (cause) {
      answer({ id: request.id, error: { message: cause instanceof Error ? cause.message : String(cause) } });
    }
    return;
  }
  if (request.kind === 'lock') {
    try {
      answer({ id: request.id, rows: [[{ held: await lock(request.key, request.shared) }]] });
    } catch (cause) {
      answer({ id: request.id, error: { message: cause instanceof Error ? cause.message : String(cause) } });
    }
    return;
  }
  if (request.kind === 'close') {
    closing = true;
    clearInterval(poll);
    await listener?.end().catch(() => {});
    await lease?.release();
    await holder?.end().catch(() => {});
    await pool.end().catch(() => {});
    answer({ id: request.id, rows: [] });
    return;
  }
  try {
    const rows = await runRetrying(request.statements, request.kind === 'tx');
    if (request.reply) answer({ id: request.id, rows });
    else parentPort!.postMessage({ ack: request.id } satisfies PgNotice);
  } catch (cause) {
    const error = {
      message: cause instanceof Error ? cause.message : String(cause),
      ...(typeof (cause as { code?: unknown }).code === 'string' && {
        code: (cause as { code: string }).code,
      }),
    };
    if (request.reply) answer({ id: request.id, error });
    else if (error.message.includes(LEASE_LOST) && lease) {
      parentPort!.postMessage({ leaseLost: lease.name } satisfies PgNotice);
    } else
      parentPort!.postMessage({
        lost: request.id,
        error: error.message,
        writes: request.statements.length,
      } satisfies PgNotice);
  }
}

let queue = Promise.resolve();
parentPort!.on('message', (request: PgRequest) => {
  queue = queue.then(() => handle(request));
});
