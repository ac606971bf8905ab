// One page of `process.list` (100 snapshots) over an SQLite store of 10,000 finished processes whose
// latest runs hold 10 outputs of 1 KiB each, read through the process manager: the first page, a page
// in the middle (after pid 5,000) and the last page (after pid 100). Keyset paging reads an index
// range from the cursor on, so a page deep in the list costs what the first one does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { encodeCursor } from '../src/paging/cursor.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { ManualPool } from '../test/support/manual-pool.ts';
import { storedProcess } from '../test/support/stored-process.ts';

const PROCESSES = 10_000;
const OUTPUTS = 10;
const OUTPUT = 'x'.repeat(1024);
const root = { id: 'root', role: 'operator' } as const;

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-pages-'));
  try {
    const path = join(dir, 'pages.db');
    const fill = await openSqliteStore({ path });
    let seq = 0;
    for (let pid = 1; pid <= PROCESSES; pid++) {
      fill.putProcess(storedProcess(pid, { runs: 1, status: 'success' }));
      fill.insertRun(pid, 1, { state: 'idle', status: 'success', durationMs: 1 });
      for (let i = 0; i < OUTPUTS; i++) fill.appendOutput(pid, 1, ++seq, OUTPUT);
      if (pid % 1000 === 0) await fill.committed();
    }
    await fill.committed();
    await fill.close();

    const manager = await createProcessManager({
      pool: new ManualPool(1),
      store: await openSqliteStore({ path }),
    });
    const name = (label: string) => `process.list, 100 of ${PROCESSES} processes (SQLite), ${label} (median)`;
    const page = (after?: number) => () =>
      manager.list({ limit: 100, ...(after === undefined ? {} : { cursor: encodeCursor([after]) }) }, root);
    const first = percentile(await sample(page(), 2000, 5), 50);
    const results: BenchResult[] = [{ name: name('first page'), value: first, unit: 'ms' }];
    for (const [label, after] of [
      ['page after pid 5000', 5000],
      ['last page (after pid 100)', 100],
    ] as const)
      results.push(
        compared(name(label), percentile(await sample(page(after), 2000, 5), 50), 'ms', {
          name: 'first page',
          value: first,
        }),
      );
    await manager.shutdown({ graceMs: 0 });
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
