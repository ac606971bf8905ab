import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConversationStore } from '../src/chat/conversation-store.ts';
import { NodeLease } from '../src/cluster/node-lease.ts';
import { postgresKysely, postgresPool } from '../src/store/sql/connect.ts';
import { POSTGRES } from '../src/store/sql/engine.ts';
import { MIGRATIONS, migrate, SCHEMA_VERSION } from '../src/store/sql/migrations.ts';
import { openPostgresStore } from '../src/store/sql/open-postgres.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { expectByteCounts, V3_ROWS, writeByteHistory } from './support/byte-counts.ts';
import { adminQuery, adminQueryOn, suiteDatabases } from './support/postgres.ts';
import { recountDatabase } from './support/postgres-equivalence.ts';
import { describeProcessStoreContract } from './support/store-contract.ts';
import { storedProcess } from './support/stored-process.ts';

const rows = async (url: string, sql: string) => (await adminQueryOn(url, sql)).rows;

const fresh = suiteDatabases();

describeProcessStoreContract('postgres', async () => openPostgresStore({ url: (await fresh()).url }));
describeProcessStoreContract('postgres, per-turn batches, a cache of one', async () =>
  openPostgresStore({ url: (await fresh()).url, flushDelayMs: 0, cache: { processes: 1, bytes: 1024 } }),
);

describe('Postgres store', () => {
  it('migrates a new database once', async () => {
    const { url } = await fresh();
    const first = await openPostgresStore({ url });
    expect(first.schema).toEqual({ from: 0, to: SCHEMA_VERSION });
    await first.close();
    const second = await openPostgresStore({ url });
    expect(second.schema).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    await second.close();
  });

  it('refuses a database with a newer schema, naming both versions', async () => {
    const { url } = await fresh();
    await (await openPostgresStore({ url })).close();
    await adminQueryOn(url, `UPDATE mci_schema SET version = ${SCHEMA_VERSION + 1}`);
    await expect(openPostgresStore({ url })).rejects.toThrow(
      expect.objectContaining({
        code: 'STORE_TOO_NEW',
        message: expect.stringContaining(
          `schema version ${SCHEMA_VERSION + 1}, newer than this server supports (${SCHEMA_VERSION})`,
        ),
      }),
    );
  });

  it('fails to open with STORE_UNAVAILABLE within its timeout when nothing answers', async () => {
    await expect(
      openPostgresStore({ url: 'postgres://postgres:secret@127.0.0.1:1/none', timeoutMs: 500 }),
    ).rejects.toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.not.stringContaining('secret') }),
    );
  });

  it('reconnects after its connections are terminated, losing no write', async () => {
    const { url, name } = await fresh();
    const errors: unknown[] = [];
    const store = await openPostgresStore({ url, onError: (error) => errors.push(error) });
    for (let pid = 1; pid <= 50; pid++) store.putProcess(storedProcess(pid));
    store.flush();
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    for (let pid = 51; pid <= 100; pid++) store.putProcess(storedProcess(pid));
    store.flush();
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    expect((await store.listProcesses({})).map((p) => p.pid)).toEqual(
      Array.from({ length: 100 }, (_, i) => 100 - i),
    );
    await store.close();
    const rows = await adminQueryOn(url, 'SELECT count(*)::int AS n FROM processes');
    expect(rows.rows[0].n).toBe(100);
    expect(errors).toEqual([]);
  });
});

describe('Postgres store, one server per database', () => {
  it('refuses a second server on the same database with STORE_LOCKED until the first closes', async () => {
    const { url } = await fresh();
    const first = await openPostgresStore({ url });
    await expect(openPostgresStore({ url })).rejects.toThrow(
      expect.objectContaining({
        code: 'STORE_LOCKED',
        message: expect.stringContaining('in use by another mci serve'),
      }),
    );
    first.putProcess(storedProcess(1));
    await first.close();
    const second = await openPostgresStore({ url });
    expect(await second.getProcess(1)).toMatchObject({ pid: 1 });
    await second.close();
  });
});

describe('Postgres store, cluster mode', () => {
  it('lets several nodes share a database; a node whose lease was ended writes nothing more', async () => {
    const { url } = await fresh();
    const lost: string[] = [];
    const a = await openPostgresStore({
      url,
      cluster: true,
      node: { name: 'a', renewMs: 60_000, onLost: (n) => lost.push(n) },
    });
    const b = await openPostgresStore({ url, cluster: true, node: { name: 'b' } });
    const pids = [a.cluster!.nextPid(), b.cluster!.nextPid()];
    expect(pids[0]).not.toBe(pids[1]);
    a.putProcess(storedProcess(pids[0]!));
    a.flush();
    await expect.poll(() => b.getProcess(pids[0]!)).toMatchObject({ pid: pids[0] });
    // Another node ends a's lease (as when it expired); a's next batch is refused by the database.
    await adminQueryOn(url, "UPDATE nodes SET stopped_at = now(), stopped_by = 'b' WHERE name = 'a'");
    a.putProcess(storedProcess(a.cluster!.nextPid()));
    a.flush();
    await expect.poll(() => lost).toEqual(['a']);
    expect((await rows(url, 'SELECT pid, node FROM processes ORDER BY pid')).map((row) => row.node)).toEqual([
      'a',
    ]);
    a.putProcess(storedProcess(a.cluster!.nextPid()));
    await a.close();
    await b.close();
    expect(await rows(url, 'SELECT count(*)::int AS n FROM processes')).toEqual([{ n: 1 }]);
  });
});

describe('node leases', () => {
  it('holds a lease renewed by the database clock (also after pg_terminate_backend), released on close; a live name is refused', async () => {
    const { url, name } = await fresh();
    const store = await openPostgresStore({ url, node: { name: 'a', leaseMs: 1000, renewMs: 50 } });
    expect(store.nodes!.node).toBe('a');
    const [first] = await store.nodes!.list();
    expect(first).toMatchObject({ name: 'a', live: true });
    expect(Date.parse(first!.leaseUntil) - Date.parse(first!.renewedAt)).toBe(1000);
    await expect.poll(async () => (await store.nodes!.list())[0]!.renewedAt).not.toBe(first!.renewedAt);
    // Renewal goes on over new connections after the database ends the old ones.
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    const after = (await rows(url, 'SELECT now()::text AS at'))[0]!.at as string;
    await expect
      .poll(async () => (await rows(url, `SELECT renewed_at > '${after}' AS renewed FROM nodes`))[0])
      .toEqual({ renewed: true });
    await store.close();
    // A second store under the name is refused while the lease lives (the database lock is free).
    await adminQueryOn(url, "UPDATE nodes SET stopped_at = NULL, lease_until = now() + interval '1 hour'");
    await expect(openPostgresStore({ url, node: { name: 'a' } })).rejects.toThrow(
      expect.objectContaining({
        code: 'STORE_LOCKED',
        message: expect.stringContaining('a live node named a'),
      }),
    );
    await adminQueryOn(url, "UPDATE nodes SET stopped_at = now(), stopped_by = 'a'");
    const reopened = await openPostgresStore({ url, node: { name: 'a' } });
    expect(await reopened.nodes!.list()).toEqual([expect.objectContaining({ name: 'a', live: true })]);
    expect((await reopened.nodes!.list())[0]).not.toHaveProperty('stoppedAt');
    await reopened.close();
    expect(await rows(url, 'SELECT name, stopped_by, lease_until <= now() AS over FROM nodes')).toEqual([
      { name: 'a', stopped_by: 'a', over: true },
    ]);
  });

  it('ends the lease of a node that stopped without releasing it, once among several live nodes', async () => {
    const { url } = await fresh();
    const store = await openPostgresStore({ url, node: { name: 'first' } });
    await store.close();
    // Nodes that died holding their leases: one expired, one still within its lease.
    await adminQueryOn(
      url,
      `INSERT INTO nodes (name, started_at, renewed_at, lease_until) VALUES
         ('dead', now(), now() - interval '20 seconds', now() - interval '10 seconds'),
         ('recent', now(), now(), now() + interval '1 hour')`,
    );
    // Three live nodes sweeping at once, each on its own pool.
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: url, max: 2 }));
    const ended: Array<[string, string[]]> = [];
    const leases = pools.map(
      (pool, i) =>
        new NodeLease(pool, `live-${i}`, 10_000, {
          expired: (names) => ended.push([`live-${i}`, names]),
          lost: () => ended.push([`live-${i}`, ['lost']]),
        }),
    );
    try {
      expect(await Promise.all(leases.map((lease) => lease.acquire(20)))).toEqual([true, true, true]);
      await expect.poll(() => ended.length).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(ended).toEqual([[expect.stringMatching(/^live-/), ['dead']]]);
      const byName = await rows(url, 'SELECT name, stopped_by FROM nodes ORDER BY name');
      expect(byName).toEqual([
        { name: 'dead', stopped_by: ended[0]![0] },
        { name: 'first', stopped_by: 'first' },
        { name: 'live-0', stopped_by: null },
        { name: 'live-1', stopped_by: null },
        { name: 'live-2', stopped_by: null },
        { name: 'recent', stopped_by: null },
      ]);
      // A node whose lease another node ended learns it at its next renewal, and stops renewing.
      await adminQueryOn(
        url,
        "UPDATE nodes SET stopped_at = now(), stopped_by = 'live-0' WHERE name = 'live-1'",
      );
      await expect
        .poll(() => ended.filter(([, names]) => names[0] === 'lost'))
        .toEqual([['live-1', ['lost']]]);
    } finally {
      for (const lease of leases) await lease.release();
      for (const pool of pools) await pool.end();
    }
    expect(await rows(url, 'SELECT name FROM nodes WHERE stopped_at IS NULL')).toEqual([{ name: 'recent' }]);
  });
});

describe('Postgres store retention', () => {
  it('selects the same expired processes as the SQLite store, and deletes unowned events', async () => {
    const { url } = await fresh();
    const postgres = await openPostgresStore({ url });
    const sqlite = await openSqliteStore({ path: ':memory:' });
    try {
      for (const store of [postgres, sqlite]) {
        for (let pid = 1; pid <= 30; pid++)
          store.putProcess({ ...storedProcess(pid), owner: pid % 3 === 0 ? 'bob' : 'alice' });
        store.putProcess({ ...storedProcess(31), state: 'running' });
        store.appendEvent({ type: 'hello', seq: 1 } as never, { owner: 'alice' });
        for (let pid = 1; pid <= 31; pid++) {
          store.appendOutput(pid, 1, 1000 + pid * 2, 'o'.repeat(100 * pid));
          store.appendLog(pid, 1, 1001 + pid * 2, 'stdout', 'é'.repeat(50 * pid));
        }
      }
      const now = Date.now();
      for (const policy of [
        { maxAgeMs: 3_600_000, maxProcesses: 5, limit: 100, now },
        { maxAgeMs: 3_600_000, maxProcesses: 5, limit: 7, now },
        { maxAgeMs: 1, maxProcesses: 1000, limit: 10, now: now + 10_000 },
        { maxAgeMs: 3_600_000, maxProcesses: 1000, maxBytes: 20_000, limit: 100, now },
        { maxAgeMs: 3_600_000, maxProcesses: 5, maxBytes: 60_000, limit: 100, now },
      ])
        expect(await postgres.expiredProcesses(policy)).toEqual(await sqlite.expiredProcesses(policy));
      // alice: 20 idle + 1 running over a quota of 5 (16 go); bob: 10 idle (5 go).
      expect(
        await postgres.expiredProcesses({ maxAgeMs: 3_600_000, maxProcesses: 5, limit: 100, now }),
      ).toHaveLength(21);
      // 200 bytes per pid each (UTF-8 bytes, not characters): bob 33,000 over 20,000 (3..21 go);
      // alice 66,200 with the running one over 20,000 (her oldest 18 go, up to pid 26).
      expect(
        await postgres.expiredProcesses({
          maxAgeMs: 3_600_000,
          maxProcesses: 1000,
          maxBytes: 20_000,
          limit: 100,
          now,
        }),
      ).toHaveLength(25);
      postgres.deleteUnownedEvents(now + 1000);
      // Only the outputs and logs of processes are left.
      expect(
        (await postgres.eventsSince(0, {})).filter(({ event }) => (event.type as string) === 'hello'),
      ).toEqual([]);
      expect(await postgres.eventsSince(0, {})).toHaveLength(62);
    } finally {
      await postgres.close();
      await sqlite.close();
    }
  });
});

describe('Postgres store byte counts', () => {
  it('keeps the stored bytes of each process through outputs, logs, a run again, a replaced record and a delete', async () => {
    const { url } = await fresh();
    const store = await openPostgresStore({ url });
    const expected = await writeByteHistory(store);
    await store.close();
    await expectByteCounts(recountDatabase(url), expected);
  });

  it('counts the bytes of the processes of a version 3 database when it migrates it', async () => {
    const { url } = await fresh();
    const pool = postgresPool(url);
    await migrate(
      postgresKysely(pool),
      POSTGRES,
      url,
      MIGRATIONS.filter((m) => m.version <= 3),
    );
    await pool.end();
    await adminQueryOn(
      url,
      [V3_ROWS.processes, V3_ROWS.outputs((hex) => `decode('${hex}', 'hex')`), V3_ROWS.logs].join(';\n'),
    );
    const store = await openPostgresStore({ url });
    expect(store.schema).toEqual({ from: 3, to: SCHEMA_VERSION });
    const policy = { maxAgeMs: Date.now(), maxProcesses: 100, maxBytes: 10, limit: 100, now: 1000 };
    expect(await store.expiredProcesses(policy)).toEqual([1]);
    await store.close();
    await expectByteCounts(recountDatabase(url), V3_ROWS.expected);
  });
});

describe('conversations in the Postgres store', () => {
  it('stores conversations and messages in Postgres, kept across a reopen; deletes with their messages', async () => {
    const { url } = await fresh();
    let store = await openPostgresStore({ url });
    let conversations = new ConversationStore(store.tables);
    const kept = await conversations.create('alice', 'First', 'replay:x');
    const gone = await conversations.create('bob', 'Second', 'replay:x');
    const first = await conversations.addMessage({
      conversationId: kept.conversationId,
      role: 'user',
      text: "it's 'quoted'",
    });
    const second = await conversations.addMessage({
      conversationId: kept.conversationId,
      role: 'assistant',
      text: 'ok',
      pids: [1, 2],
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    expect(second.id).toBeGreaterThan(first.id);
    await conversations.addMessage({ conversationId: gone.conversationId, role: 'user', text: 'bye' });
    await conversations.delete(gone.conversationId);
    conversations.close();
    await store.close();

    store = await openPostgresStore({ url });
    conversations = new ConversationStore(store.tables);
    expect(await conversations.get(gone.conversationId)).toBeUndefined();
    expect(await conversations.get(kept.conversationId)).toMatchObject({
      owner: 'alice',
      title: 'First',
      messageCount: 2,
    });
    expect(await conversations.messages(kept.conversationId)).toMatchObject([
      { id: first.id, role: 'user', text: "it's 'quoted'" },
      { id: second.id, role: 'assistant', pids: [1, 2], usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
    const rows = await adminQueryOn(url, 'SELECT count(*)::int AS n FROM chat_messages');
    expect(rows.rows[0].n).toBe(2);
    conversations.close();
    await store.close();
  });
});
