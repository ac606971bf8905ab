import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { adminQueryOn, freshDatabase } from './support/postgres.ts';
import { type Json, serveProcesses } from './support/serve-process.ts';

// `mci serve` on a PostgreSQL database (`--db postgres://...` or `MCI_DB_URL`): processes run and are
// stored there, survive a kill -9 of the server, and creation answers 503 STORE_UNAVAILABLE when the
// database stops taking writes, losing none of what it accepted.

const { dir, file: tools } = greetToolDir('mci-cluster-serve-', 'Hello!');

const { serve, http } = serveProcesses(dir);

describe('mci serve on PostgreSQL', { timeout: 120_000 }, () => {
  it('runs processes stored in Postgres and keeps them across a kill -9 (MCI_DB_URL on restart)', async () => {
    await using db = await freshDatabase();
    const first = serve(['--file', tools, '--db', db.url]);
    const url = await first.url;
    const created = await http(url, 'POST', '/processes', { code: 'output(1 + 1)', ref: 'r', block: true });
    expect(created).toMatchObject({ status: 201, body: { state: 'idle', status: 'success' } });
    const pid = created.body.pid as number;
    // Writes reach the database within a batch delay (5 ms) of the answer.
    await expect
      .poll(
        async () =>
          (
            await adminQueryOn(
              db.url,
              'SELECT p.ref, r.status FROM processes p JOIN runs r USING (pid) WHERE pid = $1',
              [pid],
            )
          ).rows,
      )
      .toEqual([{ ref: 'r', status: 'success' }]);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = serve(['--file', tools], { MCI_DB_URL: db.url });
    const again = await second.url;
    const read = await http(again, 'GET', `/processes/${pid}`);
    expect(read.body).toMatchObject({ pid, state: 'idle', status: 'success' });
    expect((await http(again, 'GET', `/processes/${pid}/runs/1`)).body).toMatchObject({
      status: 'success',
      outputs: [2],
    });
    const next = await http(again, 'POST', '/processes', { code: 'output(3)', block: true });
    expect(next.body.pid).toBeGreaterThan(pid);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('holds a node lease: a kill -9 leaves it to expire and the next node ends it; SIGTERM releases it', async () => {
    await using db = await freshDatabase();
    const nodes = async () =>
      (
        await adminQueryOn(
          db.url,
          'SELECT name, stopped_by, stopped_at IS NULL AND lease_until >= now() AS live FROM nodes ORDER BY name',
        )
      ).rows;
    const first = serve(['--file', tools, '--db', db.url, '--node', 'n1']);
    await first.url;
    expect(await nodes()).toEqual([{ name: 'n1', stopped_by: null, live: true }]);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = serve(['--file', tools, '--db', db.url], { MCI_NODE: 'n2' });
    const url = await second.url;
    // n1's lease lapses 10 s after its last renewal; n2 ends it at its next renewal (every 2 s).
    await expect.poll(nodes, { timeout: 30_000, interval: 250 }).toEqual([
      { name: 'n1', stopped_by: 'n2', live: false },
      { name: 'n2', stopped_by: null, live: true },
    ]);
    // The log (JSON lines on stdout) says which lease it ended.
    expect(second.stdout()).toMatch(/node lease expired: n1 stopped without releasing it/);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('mci_node_info{node="n2"} 1');
    expect(metrics).toContain('mci_cluster_nodes{state="live"} 1\nmci_cluster_nodes{state="stopped"} 1');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await nodes()).toEqual([
      { name: 'n1', stopped_by: 'n2', live: false },
      { name: 'n2', stopped_by: 'n2', live: false },
    ]);
  });

  it('answers 503 STORE_UNAVAILABLE while the database takes no writes, and loses nothing it accepted', async () => {
    await using db = await freshDatabase();
    const node = serve(['--file', tools, '--db', db.url]);
    const url = await node.url;
    const before: number[] = [];
    for (let i = 0; i < 5; i++)
      before.push((await http(url, 'POST', '/processes', { code: 'output(0)', autorun: false })).body.pid);
    // A transaction holding an exclusive lock on `processes` stalls every write batch.
    const locker = new pg.Client({ connectionString: db.url });
    locker.on('error', () => {});
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE processes IN ACCESS EXCLUSIVE MODE');
    const accepted: number[] = [];
    let refused: Json | undefined;
    for (let i = 0; i < 300 && !refused; i++) {
      const answer = await http(url, 'POST', '/processes', { code: `output(${i})`, autorun: false });
      if (answer.status === 201) accepted.push(answer.body.pid);
      else refused = { status: answer.status, ...answer.body };
    }
    expect(refused).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
    // A create is acknowledged once its batch commits: none is, while nothing commits.
    expect(accepted).toEqual([]);
    await locker.query('COMMIT');
    await locker.end();
    // The server works again once its store recovers (a write may still be refused until then), and
    // every accepted process is stored.
    await vi.waitFor(
      async () =>
        expect((await http(url, 'POST', '/processes', { code: 'output(1)', block: true })).status).toBe(201),
      { timeout: 30_000, interval: 200 },
    );
    const rows = await adminQueryOn(db.url, 'SELECT pid FROM processes WHERE pid = ANY($1::bigint[])', [
      accepted,
    ]);
    expect(rows.rows.map((r) => Number(r.pid)).sort((a, b) => a - b)).toEqual(accepted);
    expect(before.every((pid) => accepted.every((later) => pid < later))).toBe(true);
    node.child.kill('SIGTERM');
    await node.exited;
  });

  it('exits 1 naming the database (password hidden) when PostgreSQL does not answer', {
    timeout: 60_000,
  }, async () => {
    const node = serve(['--file', tools, '--db', 'postgres://mci:secret@127.0.0.1:1/mci']);
    expect(await node.exited).toBe(1);
    expect(node.stderr()).toContain('postgres://mci:***@127.0.0.1:1/mci');
    expect(node.stderr()).not.toContain('secret');
  });
});
