import { formatResults, type ProcessResult, toJson } from '@mci/protocol';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mediaContent } from './media-content.ts';

/** What `run_code` puts in `structuredContent` (declared as its `outputSchema`). */
export interface RunCodeStructured {
  [key: string]: unknown;
  pid: number;
  run: number;
  status: 'success' | 'failed' | 'timeout' | 'canceled' | null;
  /** The `output()` values in order, as JSON (Map, Set, bigint in the response pipe's JSON forms). */
  outputs: unknown[];
  stdout: string;
  stderr: string;
  error?: { name: string; message: string; line?: number; column?: number };
  durationMs: number;
}

/** The JSON Schema of {@link RunCodeStructured}: `run_code`'s `outputSchema`. */
export const RUN_CODE_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    pid: { type: 'integer', description: 'the process id (see GET /processes/{pid}, mci ps)' },
    run: { type: 'integer', description: 'the run number of the process' },
    status: { type: ['string', 'null'], description: 'success, failed, timeout or canceled' },
    outputs: { type: 'array', description: 'the output() values, in order' },
    stdout: { type: 'string' },
    stderr: { type: 'string' },
    error: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        message: { type: 'string' },
        line: { type: 'integer', description: '1-based line in the submitted code' },
        column: { type: 'integer' },
      },
      required: ['name', 'message'],
    },
    durationMs: { type: 'number' },
  },
  required: ['pid', 'run', 'status', 'outputs', 'stdout', 'stderr', 'durationMs'],
} as const;

/** An output value as plain JSON (the response pipe's JSON, so Map/Set/bigint read the same way). */
const jsonValue = (value: unknown): unknown => (value === undefined ? null : JSON.parse(toJson(value)));

/**
 * The `run_code` result of a finished process: one text block (the response pipe rendering of the
 * run, capped at `maxTextBytes`), then an `image`, `audio` or `resource_link` item per picture,
 * sound or file of its outputs (see {@link mediaContent}), the structured form, and `isError` unless
 * the run succeeded.
 */
export function runCodeResult(result: ProcessResult, maxTextBytes: number): CallToolResult {
  const structured: RunCodeStructured = {
    pid: result.pid,
    run: result.run,
    status: result.status,
    outputs: result.outputs.map(jsonValue),
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs ?? 0,
  };
  if (result.error) structured.error = { ...result.error };
  return {
    content: [
      { type: 'text', text: formatResults([result], { maxBytes: maxTextBytes }) },
      ...mediaContent(result.outputs),
    ],
    structuredContent: structured,
    isError: result.status !== 'success',
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The result of an MCI tool called directly: the process ran `output(await tools[name](args))`, so its
 * one output is the MCI tool result, passed through as MCP (`content` items as they are,
 * `structuredContent` when it is an object, the executor's `metadata` under `_meta["mci/metadata"]`).
 * A failed tool is an `isError` result with the tool's error; a run that did not succeed otherwise
 * (timeout, kill) is an `isError` result with the run's rendering.
 */
export function directToolResult(result: ProcessResult, maxTextBytes: number): CallToolResult {
  const value = result.outputs[0];
  // A failed tool rejects in the sandbox with a ToolError: its message is the tool's error.
  if (result.status === 'failed' && result.error?.name === 'ToolError')
    return { content: [{ type: 'text', text: result.error.message }], isError: true };
  if (result.status !== 'success' || !isRecord(value) || !Array.isArray(value.content)) {
    return {
      content: [{ type: 'text', text: formatResults([result], { maxBytes: maxTextBytes }) }],
      isError: true,
    };
  }
  const mapped: CallToolResult = {
    content: value.content as CallToolResult['content'],
    isError: value.isError === true,
  };
  if (isRecord(value.structuredContent)) mapped.structuredContent = value.structuredContent;
  if (isRecord(value.metadata)) mapped._meta = { 'mci/metadata': value.metadata };
  return mapped;
}
