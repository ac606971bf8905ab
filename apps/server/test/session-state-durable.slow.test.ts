import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { freshDatabase } from './support/postgres.ts';
import { serveProcesses } from './support/serve-process.ts';
import { CAS_INCREMENT_PROGRAM } from './support/state-programs.ts';

// `state` through real `mci serve` processes: a value written by run 1 of a session is read by run 3
// after a kill -9 and a restart on the same SQLite file, and on another node of a PostgreSQL cluster,
// where 20 concurrent compare-and-set increments over two nodes end at exactly 20.

const { dir, file: tools } = greetToolDir('mci-state-durable-', 'Hello!');
const { serve, http } = serveProcesses(dir);

const WRITE = `await state.set('rows', { count: 2000n, at: new Date(86400000), seen: new Set(['a']) }); return 'written'`;
const READ = `const v = await state.get('rows'); return [v.count === 2000n, v.at.getTime(), v.seen.has('a')]`;

async function run(url: string, code: string, session: string) {
  const answer = await http(url, 'POST', '/processes', { code, session, block: true });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe('state across restarts and nodes', () => {
  it('reads run 1 state in run 3 after kill -9 and a restart (SQLite)', { timeout: 120_000 }, async () => {
    const db = join(dir, 'sqlite', 'mci.db');
    const first = serve(['--file', tools, '--db', db]);
    const url = await first.url;
    expect((await run(url, WRITE, 'task-1')).outputs).toEqual(['written']);
    expect((await run(url, 'return 2', 'task-1')).outputs).toEqual([2]);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = serve(['--file', tools, '--db', db]);
    const again = await second.url;
    const third = await run(again, READ, 'task-1');
    expect(third).toMatchObject({ status: 'success', session: 'task-1', outputs: [[true, 86400000, true]] });
    expect((await run(again, `return await state.get('rows') ?? null`, 'task-2')).outputs).toEqual([null]);
    const detail = await http(again, 'GET', '/sessions/task-1');
    expect(detail.body.processes).toHaveLength(3);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('shares state between two cluster nodes; 20 CAS increments end at 20 (PostgreSQL)', {
    timeout: 180_000,
  }, async () => {
    await using db = await freshDatabase();
    const one = serve(['--file', tools, '--db', db.url, '--cluster', '--node', 'n1']);
    const two = serve(['--file', tools, '--db', db.url, '--cluster', '--node', 'n2']);
    const [url1, url2] = await Promise.all([one.url, two.url]);
    await run(url1, WRITE, 'shared');
    expect((await run(url2, READ, 'shared')).outputs).toEqual([[true, 86400000, true]]);
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run(i % 2 === 0 ? url1 : url2, CAS_INCREMENT_PROGRAM, 'shared')),
    );
    expect(runs.map((r) => r.status)).toEqual(Array(20).fill('success'));
    expect((await http(url2, 'GET', '/sessions/shared/state/n')).body).toMatchObject({
      value: 20,
      version: 20,
    });
    one.child.kill('SIGKILL');
    expect((await run(url2, `return await state.get('n')`, 'shared')).outputs).toEqual([20]);
    two.child.kill('SIGTERM');
    await two.exited;
  });
});
