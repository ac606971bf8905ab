import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './support/postgres.ts';
import { type ServeProcess, serveProcesses } from './support/serve-process.ts';

// Two `mci serve --cluster` nodes on one PostgreSQL database count a principal's runs per minute
// together: creates sent to both at once never go past its quota, and a node killed with -9 takes
// nothing of the count with it.

const dir = mkdtempSync(join(tmpdir(), 'mci-cluster-quotas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tools = join(dir, 'tools.yaml');
writeFileSync(
  tools,
  "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'hi' }\n",
);
const OPERATOR = 'operator-token-0e7d3b91';
const ALICE = 'alice-token-52c8f4a6';
const BOB = 'bob-token-c3a1907e';
const config = join(dir, 'mci.yaml');
writeFileSync(
  config,
  `tokens:
  - { token: ${OPERATOR}, role: operator, id: operator }
  - { token: ${ALICE}, role: client, id: alice }
  - { token: ${BOB}, role: client, id: bob }
quotas:
  principals:
    alice: { runsPerMinute: 4 }
limits: { rateLimitPerSecond: 100000 }
`,
);
const { serve } = serveProcesses(dir);

/** Node `name` of the cluster on `db`. */
const node = (db: string, name: string) =>
  serve(['--config', config, '--file', tools, '--db', db, '--cluster', '--node', name, '--concurrency', '2']);

/** Stops the nodes still running (SIGTERM) and waits for them to exit. */
async function stop(nodes: ServeProcess[]): Promise<void> {
  for (const n of nodes)
    if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
}

/** POST /processes as `token` on `url`: the status and `Retry-After`. */
async function create(url: string, token: string) {
  const response = await fetch(`${url}/processes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ code: 'output(1)' }),
  });
  const body = (await response.json()) as { code?: string };
  return { status: response.status, retryAfter: response.headers.get('Retry-After'), code: body.code };
}

/** Waits for the next minute when less than `needMs` of this one is left (the quota's window). */
async function roomInWindow(needMs = 30_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe('quotas in a cluster', () => {
  it('counts runsPerMinute across two nodes through the database, and past a kill -9 of one', {
    timeout: 120_000,
  }, async () => {
    await using db = await freshDatabase();
    const nodes = [node(db.url, 'q1'), node(db.url, 'q2')];
    try {
      const [url1, url2] = await Promise.all(nodes.map((n) => n.url));
      await roomInWindow();
      // Ten creates at once, alternating between the nodes: four go in, six are refused.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => create(i % 2 === 0 ? url1! : url2!, ALICE)),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(6);
      for (const answer of refused) {
        expect(answer.code).toBe('QUOTA_EXCEEDED');
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      // Alice's processes: exactly the four admitted, on whichever node.
      const list = await fetch(`${url1}/processes`, { headers: { Authorization: `Bearer ${ALICE}` } });
      expect(((await list.json()) as { processes: unknown[] }).processes).toHaveLength(4);
      // Bob's quota is his own.
      expect((await create(url2!, BOB)).status).toBe(201);

      // The count lives in the database: killing a node forgets nothing.
      nodes[0]!.child.kill('SIGKILL');
      await nodes[0]!.exited;
      expect(await create(url2!, ALICE)).toMatchObject({ status: 429, code: 'QUOTA_EXCEEDED' });
      const metrics = await fetch(`${url2}/metrics`, { headers: { Authorization: `Bearer ${OPERATOR}` } });
      expect(await metrics.text()).toContain('mci_principal_window_runs{principal="alice"} 4');
    } finally {
      await stop(nodes);
    }
  });
});
