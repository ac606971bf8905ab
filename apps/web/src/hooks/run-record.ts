import type { CallRecord, RunSnapshot, ServerEvent } from '@mci/client';

/** A tool call a run made (from live or replayed `tool` events). */
export interface ToolCall {
  seq: number;
  name: string;
  durationMs: number;
  isError: boolean;
}

/**
 * One run as the console shows it: the server's run snapshot plus the tool calls it made (from
 * events while it runs) and, once it ended, its calls as the server's audit records them.
 */
export interface RunRecord extends RunSnapshot {
  tools: ToolCall[];
  calls?: CallRecord[];
}

/** An empty record for run `run` (filled by events, then by the server's run snapshot). */
export function emptyRun(run: number): RunRecord {
  return { run, state: 'queued', status: null, outputs: [], stdout: '', stderr: '', tools: [] };
}

/** `record` with `event` (an output, a log line, a tool call or a state change of its run) applied. */
export function applyRunEvent(record: RunRecord, event: ServerEvent): RunRecord {
  switch (event.type) {
    case 'output':
      return { ...record, outputs: [...record.outputs, event.value] };
    case 'log':
      return { ...record, [event.stream]: record[event.stream] + event.text };
    case 'tool':
      return {
        ...record,
        tools: [
          ...record.tools,
          { seq: event.seq, name: event.name, durationMs: event.durationMs, isError: event.isError },
        ],
      };
    case 'process': {
      const { state, status, error, queuedAt, startedAt, endedAt, durationMs } = event;
      return {
        ...record,
        state,
        status,
        ...(error !== undefined && { error }),
        ...(queuedAt !== undefined && { queuedAt }),
        ...(startedAt !== undefined && { startedAt }),
        ...(endedAt !== undefined && { endedAt }),
        ...(durationMs !== undefined && { durationMs }),
      };
    }
    default:
      return record;
  }
}
