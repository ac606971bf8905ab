import type { CallsTable } from '../store/sql/tables.ts';
import { callRecord } from './call-record.ts';

/** A call as the call logs of suspended runs held it before the audit (schema versions 7 to 9). */
interface LegacyCall {
  name: string;
  input: unknown;
  ok: boolean;
  value: unknown;
}

/**
 * The `calls` rows of a call log of a run suspended before schema version 10: each call becomes its
 * record (with no time, duration or decision known: `allow`), its whole result in the record.
 */
export function legacyCallRows(pid: number, run: number, log: Array<LegacyCall | null>): CallsTable[] {
  const rows: CallsTable[] = [];
  for (const [position, call] of log.entries()) {
    if (!call) continue;
    const kind = call.name === 'fetch' ? 'fetch' : 'tool';
    const { inputHash, ...record } = callRecord(
      {
        position,
        kind,
        name: call.name,
        input: call.input,
        startedAt: new Date(0).toISOString(),
        durationMs: 0,
        resolved: call.ok,
        value: call.value,
        decision: 'allow',
      },
      Number.MAX_SAFE_INTEGER,
    );
    rows.push({
      pid,
      run,
      position,
      body: JSON.stringify(record),
      input_hash: inputHash,
      replay: null,
    });
  }
  return rows;
}
