import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import type { PgNotice, PgReply, PgRequest, PgStatement } from './pg-protocol.ts';

// The Postgres store's worker thread: it owns the `pg` pool and runs requests one after another, in
// the order the main thread posted them, so a read sees every write posted before it. Answers to
// synchronous requests go through `replies` and a counter in shared memory the main thread waits on
// (Atomics.wait); batch acknowledgements and losses go to the parent port.

const { url, poolSize, retryMs, shared, replies } = workerData as {
  url: string;
  poolSize: number;
  retryMs: number;
  shared: Int32Array;
  replies: MessagePort;
};

// bigint columns (pids, seqs, epoch ms) stay well below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: retryMs });
// A connection the server ended (restart, pg_terminate_backend) is dropped by the pool; the next
// request opens a new one.
pool.on('error', () => {});

/** SQLSTATE classes after which the same transaction may succeed on a new connection. */
const RETRYABLE = /^(08|57P|53)/;
const isRetryable = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? RETRYABLE.test(code) : error instanceof Error;
};

async function run(statements: PgStatement[], transaction: boolean) {
  const client = await pool.connect();
  // A checked-out client whose connection drops between queries emits 'error'; the next query fails.
  const ignore = () => {};
  client.on('error', ignore);
  let broken = false;
  try {
    if (transaction) await client.query('BEGIN');
    const rows: Array<Array<Record<string, unknown>>> = [];
    for (const { sql, params } of statements) rows.push((await client.query(sql, params)).rows);
    if (transaction) await client.query('COMMIT');
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

/** Runs with retries on connection failures for up to `retryMs` (a transaction is all or nothing). */
async function runRetrying(statements: PgStatement[], transaction: boolean) {
  const deadline = Date.now() + retryMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await run(statements, transaction);
    } catch (error) {
      if (!isRetryable(error) || Date.now() + wait > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function answer(reply: PgReply) {
  replies.postMessage(reply);
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
}

async function handle(request: PgRequest): Promise<void> {
  if (request.kind === 'close') {
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
    else
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
