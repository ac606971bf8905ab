import { createHash } from 'node:crypto';
import type { CallApproval, CallDecision, CallResult } from '@mci/protocol';
import type { StoredCall } from '../processes/process-store.ts';

/**
 * How many UTF-8 bytes of a call's input and of its result (as JSON) the audit keeps by default
 * (`limits.auditValueBytes`); a larger input is cut to that many bytes, a larger result is
 * summarized without its value.
 */
export const DEFAULT_AUDIT_VALUE_BYTES = 4096;

/** A call that settled (or was refused), as the gate of a run saw it. */
export interface SettledCall {
  position: number;
  kind: 'tool' | 'fetch';
  /** The tool's name, or `fetch`. */
  name: string;
  /** The input as JSON, the server's secrets taken out (a `fetch`: `{ method, url, body? }`). */
  input: unknown;
  startedAt: string;
  durationMs: number;
  /** True when the call resolved, with `value` its result as JSON; false: `value` is its error. */
  resolved: boolean;
  value: unknown;
  decision: CallDecision;
  rule?: number | undefined;
  approval?: CallApproval | undefined;
}

/** The hash a resumed run's call must match: the sha256 (hex) of the input's JSON. */
export function inputHashOf(input: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(input) ?? 'undefined')
    .digest('hex');
}

/** The start of `text` that fits `bytes` UTF-8 bytes (never splitting a character). */
function cut(text: string, bytes: number): string {
  const buffer = Buffer.from(text);
  if (buffer.byteLength <= bytes) return text;
  // A lone piece of a character decodes as U+FFFD: drop it.
  return buffer
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/** What a tool result or a `fetch` response (as the gate records it: body in base64) was. */
function summaryOf(kind: 'tool' | 'fetch', value: unknown, json: string): Omit<CallResult, 'value'> {
  if (kind === 'fetch') {
    const response = value as { status?: number; headers?: Array<[string, string]>; body?: string };
    const type = response.headers?.find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    const status = typeof response.status === 'number' ? response.status : 0;
    return {
      bytes: Buffer.byteLength(response.body ?? '', 'base64'),
      isError: status >= 400,
      contentTypes: type === undefined ? [] : [type],
      status,
    };
  }
  const result = value as { isError?: unknown; content?: Array<{ type?: unknown }> } | null;
  const types = new Set<string>();
  for (const item of Array.isArray(result?.content) ? result.content : [])
    if (typeof item?.type === 'string') types.add(item.type);
  return { bytes: Buffer.byteLength(json), isError: result?.isError === true, contentTypes: [...types] };
}

/**
 * The audit record of `call`: its input cut to `maxBytes` bytes of JSON, its result summarized (with
 * the whole result when its JSON fits `maxBytes`), its error message cut to `maxBytes` bytes. A result
 * that did not fit is kept whole in `replay` (the store writes it only for runs that suspend: a resumed
 * run answers the call from it).
 */
export function callRecord(call: SettledCall, maxBytes: number): StoredCall {
  const inputJson = JSON.stringify(call.input) ?? 'null';
  const inputBytes = Buffer.byteLength(inputJson);
  const record: StoredCall = {
    position: call.position,
    kind: call.kind,
    name: call.name,
    startedAt: call.startedAt,
    durationMs: Math.round(call.durationMs * 1000) / 1000,
    ok: false,
    decision: call.decision,
    ...(call.rule !== undefined && { rule: call.rule }),
    ...(call.approval && { approval: call.approval }),
    input: inputBytes <= maxBytes ? (call.input ?? null) : cut(inputJson, maxBytes),
    inputBytes,
    ...(inputBytes > maxBytes && { inputTruncated: true as const }),
    inputHash: inputHashOf(call.input),
  };
  if (!call.resolved) {
    const error = call.value as { message?: unknown; code?: unknown };
    record.error = {
      message: cut(String(error?.message ?? 'the call failed'), maxBytes),
      ...(typeof error?.code === 'string' && { code: error.code }),
    };
    return record;
  }
  const json = JSON.stringify(call.value) ?? 'null';
  const summary = summaryOf(call.kind, call.value, json);
  const fits = Buffer.byteLength(json) <= maxBytes;
  record.ok = !summary.isError || call.kind === 'fetch';
  record.result = { ...summary, ...(fits ? { value: call.value } : { truncated: true as const }) };
  if (!fits) record.replay = call.value;
  return record;
}

/**
 * What a resumed run answers a recorded call with: `resolved` and the value (the result, or the
 * error), or undefined when the record lacks the result (it was cut and never kept whole).
 */
export function replayOf(call: StoredCall): { resolved: boolean; value: unknown } | undefined {
  if (call.error) return { resolved: false, value: call.error };
  const value = call.replay !== undefined ? call.replay : call.result?.value;
  return value === undefined ? undefined : { resolved: true, value };
}
