import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ApprovalStore } from '../src/approvals/approval-store.ts';
import { Approvals } from '../src/approvals/approvals.ts';
import { createLogger } from '../src/logger.ts';
import { openPostgresStore } from '../src/store/sql/open-postgres.ts';
import { adminQueryOn, freshDatabase, POSTGRES_ADMIN_URL } from './support/postgres.ts';
import { until } from './support/until.ts';

// The approvals sweep of a cluster node whose database ended every connection (pg_terminate_backend)
// while the connections sat idle in the pool: the sweep's next query meets a dead connection and is
// tried again on a live one, so the sweep goes on without logging a failure.

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * Ends every connection to database `name` and waits until their backends are gone, blocking this
 * thread meanwhile (a child program does it): the pool reads of the ended connections only after
 * the caller's next queries went out on them.
 */
function terminateAllBlocking(name: string): void {
  const program = `
    import pg from 'pg';
    const client = new pg.Client({ connectionString: process.argv[1] });
    await client.connect();
    const { rows } = await client.query(
      'SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity WHERE datname = $1',
      [process.argv[2]],
    );
    await client.end();
    process.stdout.write(String(rows.filter((row) => row.ended).length));
  `;
  const ended = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', program, POSTGRES_ADMIN_URL, name],
    { cwd: SERVER_DIR, encoding: 'utf8' },
  );
  expect(Number(ended)).toBeGreaterThan(0);
}

/** Stores rules straight in the database (as another node would); returns their `updated_at`. */
async function storeRules(url: string, tool: string): Promise<string> {
  const updatedAt = new Date().toISOString();
  const rules = JSON.stringify([{ tool, decision: 'deny' }]);
  await adminQueryOn(
    url,
    `INSERT INTO policies (name, rules, updated_at, updated_by) VALUES ('current', $1, $2, 'other-node')
     ON CONFLICT (name) DO UPDATE SET rules = $1, updated_at = $2, updated_by = 'other-node'`,
    [rules, updatedAt],
  );
  return updatedAt;
}

it('the approvals sweep logs no failure when the database ended the idle connections of the pool', async () => {
  await using database = await freshDatabase();
  const store = await openPostgresStore({ url: database.url, cluster: true, onError: () => {} });
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk) => lines.push(String(chunk)));
  const approvals = await Approvals.open({
    store: new ApprovalStore(store.tables.db, store.engine),
    tools: [],
    sweepMs: 20,
    logger: createLogger({ level: 'info', destination }),
  });
  // An approval past its time: the sweep expires it and resumes its process, and while the process
  // resumes (a blocking resumer) the database ends every connection; the sweep's next query
  // (decided approvals nobody resumed) takes the dead connection the resume's claim left idle.
  await approvals.store.suspend(
    {
      id: 'ap_000000001000000000001',
      pid: 7,
      run: 1,
      principal: 'alice',
      kind: 'tool',
      tool: 'charge',
      position: 0,
      state: 'pending',
      createdAt: new Date(Date.now() - 2000).toISOString(),
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    },
    { outputs: 0, stdout: 0, stderr: 0, tools: 0 },
  );
  const resumed: number[] = [];
  approvals.start({
    resume: async (pid) => {
      terminateAllBlocking(database.name);
      resumed.push(pid);
    },
    announce: async () => {},
  });
  try {
    await until(
      'the expired approval is resumed',
      async () => resumed.length,
      (count) => count > 0,
    );
    // Rules stored now are applied by a round of the sweep that began afterwards.
    const updatedAt = await storeRules(database.url, 'charge');
    await until(
      'the sweep applies rules stored after the connections ended',
      async () => approvals.policySet().updatedAt,
      (seen) => seen === updatedAt,
    );
    expect(resumed).toEqual([7]);
    expect(lines.map((line) => JSON.parse(line)).filter((line) => line.level >= 40)).toEqual([]);
  } finally {
    approvals.close();
    await store.close();
  }
});
