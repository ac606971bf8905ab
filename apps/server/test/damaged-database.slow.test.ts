import { mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, spawnMci } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';

// `mci serve` on a damaged database: exit 1 naming the file, what is wrong and what to do, and the
// lock released (a second start says the same, not "in use").

const dir = mkdtempSync(join(tmpdir(), 'mci-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function damagedDatabase(): Promise<string> {
  const path = join(dir, 'mci.db');
  const store = await openSqliteStore({ path });
  for (let pid = 1; pid <= 300; pid++) {
    store.putProcess({
      pid,
      owner: 'alice',
      code: `output(${JSON.stringify('x'.repeat(2000))})`,
      lang: 'ts',
      createdAt: '2026-11-25T00:00:00.000Z',
      timeoutMs: 1000,
      memoryLimitMb: 64,
      state: 'idle',
      status: null,
      runs: 0,
    });
  }
  await store.close();
  // dd over a few pages in the middle of the file.
  const pages = statSync(path).size / 4096;
  const fd = openSync(path, 'r+');
  const garbage = Buffer.alloc(4096 * 5, 0xa5);
  writeSync(fd, garbage, 0, garbage.length, 4096 * Math.floor(pages / 2));
  return path;
}

describe('a damaged database', () => {
  it('makes mci serve exit 1 with the file, the problem and the remedy, releasing its lock', async () => {
    const path = await damagedDatabase();
    const args = ['serve', '--db', path, '--port', '0', '--file', 'examples/mci.yaml'];
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await spawnMci(args, { cwd: repoRoot, env: { MCI_LOG_LEVEL: 'silent' } });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`the process database ${path} is corrupt`);
      expect(run.stderr).toContain(`sqlite3 ${path} ".recover"`);
      expect(run.stderr).toContain('new --db');
      expect(run.stderr).not.toContain('in use');
    }
  });
});
