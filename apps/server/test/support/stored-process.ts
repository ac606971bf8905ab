import type { StoredProcess } from '../../src/processes/process-store.ts';

/** A stored process record for store tests: alice's idle `output(pid)` that never ran, unless `fields` say otherwise. */
export const storedProcess = (pid: number, fields: Partial<StoredProcess> = {}): StoredProcess => ({
  pid,
  owner: 'alice',
  code: `output(${pid})`,
  lang: 'ts',
  createdAt: '2026-01-01T00:00:00.000Z',
  timeoutMs: 30000,
  memoryLimitMb: 128,
  state: 'idle',
  status: null,
  runs: 0,
  ...fields,
});
