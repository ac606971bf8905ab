import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/index.ts';
import { createLogger } from '../src/logger.ts';
import { greetToolDir } from './support/greet-tools.ts';
import { type Answer, request } from './support/http.ts';
import { freshDatabase } from './support/postgres.ts';
import {
  CreateLog,
  expectAcknowledgedStored,
  healthz,
  privatePostgres,
  until,
} from './support/store-faults.ts';

// The PostgreSQL store when its database goes away or stops answering under a running server: the
// server stays up and keeps answering (`/healthz` included: nothing waits for the database on its
// thread), creates get 201 or 503 STORE_UNAVAILABLE (never 500), write batches are retried until they
// commit, and a server started afterwards on the database finds every acknowledged process.

const tools = greetToolDir('mci-pg-faults-', 'Hello!');

/** A server on the PostgreSQL database `url`; the start of its log is printed if the test fails. */
function start(url: string, onTestFailed: (fn: () => void) => void) {
  const lines: string[] = [];
  onTestFailed(() =>
    console.error(`server log (${url}), first 10 of ${lines.length} lines:\n${lines.slice(0, 10).join('')}`),
  );
  return createServer({
    port: 0,
    file: tools.file,
    db: url,
    concurrency: 2,
    retention: false,
    limits: { rateLimitPerSecond: 100_000 },
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }),
  });
}

describe('PostgreSQL store when the database fails', () => {
  it('restarted under load: creates get 201 or 503, /healthz 503 while it is down and 200 after, a new server finds every acknowledged process', {
    timeout: 120_000,
  }, async (ctx) => {
    await using postgres = await privatePostgres();
    const log = new CreateLog('restart');
    {
      await using server = await start(postgres.url, ctx.onTestFailed);
      const creating = log.keepCreating(server.url, 1000, 2);
      try {
        await until(
          'creates acknowledged',
          async () => log.acknowledged.size,
          (n) => n >= 10,
        );
        await postgres.stop();
        await until(
          '/healthz 503 while PostgreSQL is down',
          () => healthz(server.url),
          (a) => a.status === 503,
        );
        // Down for longer than the store's 5 s timeout: creates waiting for their commit are refused.
        await until(
          'a create refused while PostgreSQL is down',
          async () => log.refused,
          (n) => n > 0,
        );
        await postgres.start();
        await until(
          '/healthz 200 once PostgreSQL is back',
          () => healthz(server.url),
          (a) => a.status === 200,
        );
        const acknowledged = log.acknowledged.size;
        await until(
          'creates acknowledged again',
          async () => log.acknowledged.size,
          (n) => n >= acknowledged + 5,
        );
      } finally {
        await creating.stop();
      }
      await ctx.annotate(`${log.acknowledged.size} creates acknowledged, ${log.refused} refused with 503`);
    }
    await using again = await start(postgres.url, ctx.onTestFailed);
    await expectAcknowledgedStored(again.url, log);
  });

  it('stalled by a table lock: /healthz keeps answering at once, says 503 past the store timeout, and the process completes once the lock is released', {
    timeout: 60_000,
  }, async (ctx) => {
    await using db = await freshDatabase();
    await using server = await start(db.url, ctx.onTestFailed);
    expect((await request(server.url, 'POST', '/processes', { code: 'output(0)', block: true })).status).toBe(
      201,
    );

    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let locked = false;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE processes IN ACCESS EXCLUSIVE MODE');
      locked = true;
      const created = request(server.url, 'POST', '/processes', {
        code: 'output("after the stall")',
        ref: 'stalled',
      });
      created.catch(() => {}); // awaited below, unless an earlier check fails
      // The create's write batch now waits for the lock.
      await until(
        'a write waiting for the lock on processes',
        async () =>
          (
            await locker.query(
              "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'processes'::regclass",
            )
          ).rows[0].n as number,
        (n) => n > 0,
      );
      const latencies: number[] = [];
      const timedHealthz = async (): Promise<Answer> => {
        const started = performance.now();
        const answer = await healthz(server.url);
        latencies.push(Math.round(performance.now() - started));
        return answer;
      };
      const unhealthy = await until(
        '/healthz 503 while the write is stalled',
        timedHealthz,
        (a) => a.status === 503,
        { intervalMs: 100 },
      );
      expect(unhealthy.body).toMatchObject({ status: 'store_unavailable', message: expect.any(String) });
      await ctx.annotate(
        `/healthz latencies while stalled (ms): first ${latencies[0]}, max ${Math.max(...latencies)}`,
      );
      // A liveness bound, not a performance one: a /healthz that waited for the database took 5 s.
      expect(Math.max(...latencies)).toBeLessThan(2000);
      expect(await created).toMatchObject({ status: 503, body: { code: 'STORE_UNAVAILABLE' } });

      await locker.query('ROLLBACK');
      locked = false;
      await until(
        '/healthz 200 once the lock is released',
        () => healthz(server.url),
        (a) => a.status === 200,
      );
      const listed = await until(
        'the process created during the stall idle',
        () => request(server.url, 'GET', '/processes?ref=stalled'),
        (a) => a.body.processes?.length === 1 && a.body.processes[0].state === 'idle',
      );
      const { pid } = listed.body.processes[0];
      expect(listed.body.processes[0]).toMatchObject({ status: 'success' });
      expect((await request(server.url, 'GET', `/processes/${pid}/output`)).body.outputs).toEqual([
        'after the stall',
      ]);
    } finally {
      if (locked) await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  });
});
