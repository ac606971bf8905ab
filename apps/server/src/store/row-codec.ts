import { deserialize } from 'node:v8';
import { type CheckMode, encodeOutputValue, type ProcessState, type ProcessStatus, type ServerEvent } from '@mci/protocol';
import type { EventRoute, StoredEvent, StoredProcess, StoredRun } from '../processes/process-store.ts';

// How stored rows become records. Output values are stored in the output encoding of
// @mci/protocol (JSON text as UTF-8 bytes), like everything else; rows written with V8's serializer
// (they start with its 0xFF version tag) are read and encoded the same way.

type SqlValue = string | number | null | Uint8Array;
type Row = Record<string, SqlValue>;

export function toProcess(row: Row): StoredProcess {
  const record: StoredProcess = {
    pid: row.pid as number,
    owner: row.owner as string,
    code: row.code as string,
    lang: row.lang as string,
    createdAt: row.created_at as string,
    timeoutMs: row.timeout_ms as number,
    memoryLimitMb: row.memory_limit_mb as number,
    state: row.state as ProcessState,
    status: row.status as ProcessStatus,
    runs: row.runs as number,
  };
  if (row.ref !== null) record.ref = row.ref as string;
  if (row.metadata !== null) record.metadata = JSON.parse(row.metadata as string);
  if (typeof row.check === 'string') record.check = row.check as CheckMode;
  if (typeof row.session === 'string') record.session = row.session;
  return record;
}

export function toRun(row: Row, outputs: unknown[], logs: Row[]): StoredRun {
  const run: StoredRun = {
    pid: row.pid as number,
    run: row.run as number,
    state: row.state as ProcessState,
    status: row.status as ProcessStatus,
    outputs,
    stdout: '',
    stderr: '',
  };
  if (row.queued_at !== null) run.queuedAt = row.queued_at as string;
  if (row.started_at !== null) run.startedAt = row.started_at as string;
  if (row.ended_at !== null) run.endedAt = row.ended_at as string;
  if (row.duration_ms !== null) run.durationMs = row.duration_ms as number;
  if (row.error !== null) run.error = JSON.parse(row.error as string);
  if (row.truncated !== null) run.truncated = row.truncated === 1;
  if (typeof row.warnings === 'string') run.warnings = JSON.parse(row.warnings);
  const text = { stdout: [] as string[], stderr: [] as string[] };
  for (const log of logs) text[log.stream as 'stdout' | 'stderr'].push(log.text as string);
  run.stdout = text.stdout.join('');
  run.stderr = text.stderr.join('');
  return run;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** The stored bytes of an output value (already in the output encoding): its JSON text. */
export const encodeValue = (value: unknown): Uint8Array => utf8.encode(JSON.stringify(value));

/** The output value of stored bytes, in the output encoding (V8-serialized rows are encoded on read). */
export function decodeValue(data: Uint8Array): unknown {
  if (data[0] === V8_VERSION_TAG) return encodeOutputValue(deserialize(data));
  return JSON.parse(fromUtf8.decode(data));
}

/** The first byte of V8's serializer output; never the first byte of JSON text. */
const V8_VERSION_TAG = 0xff;

/** Kinds of rows of the replay query (which table a row came from). */
export const EVENT_ROW = 0;
export const OUTPUT_ROW = 1;
export const LOG_ROW = 2;

/** A row of the replay query: an `events` row, or an output or log row rebuilt into its event. */
export function toStoredEvent(row: Row): StoredEvent {
  const route: EventRoute = { owner: row.owner as string };
  if (row.pid !== null) route.pid = row.pid as number;
  if (row.ref !== null) route.ref = row.ref as string;
  if (row.stream_id !== null) route.streamId = row.stream_id as string;
  const seq = row.seq as number;
  const pid = row.pid as number;
  const run = row.run as number;
  let event: ServerEvent;
  // Output and log events carry the ref and stream of their process, as when they were live.
  const where = {
    ...(route.ref !== undefined && { ref: route.ref }),
    ...(route.streamId !== undefined && { streamId: route.streamId }),
  };
  if (row.kind === OUTPUT_ROW)
    event = { type: 'output', seq, pid, run, ...where, value: decodeValue(row.data as Uint8Array) };
  else if (row.kind === LOG_ROW)
    event = {
      type: 'log',
      seq,
      pid,
      run,
      ...where,
      stream: row.stream as 'stdout' | 'stderr',
      text: row.data as string,
    };
  else event = JSON.parse(row.data as string) as ServerEvent;
  return { event, route };
}
