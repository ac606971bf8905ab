import type { CallRecord } from '@mci/protocol';
import { formatDuration } from './process-format.ts';

/** Longest input text one line of `mci logs --calls` shows (the rest is `…`). */
const INPUT_CHARS = 120;

/**
 * One line of `mci logs --calls` for `call`: its position, what was called (a tool, or `fetch` with
 * its method and URL), the decision and who decided, the duration, and how it ended (the result's
 * size and content types, or the error):
 * `#2 tool charge {"amount":5} ask: approved by op 3ms ok text 18 B`.
 */
export function formatCall(call: CallRecord): string {
  const input = call.input as { method?: string; url?: string } | null;
  const what =
    call.kind === 'fetch'
      ? `fetch ${input?.method ?? ''} ${input?.url ?? ''}`
      : `tool ${call.name} ${clip(typeof call.input === 'string' && call.inputTruncated ? call.input : (JSON.stringify(call.input) ?? ''))}`;
  const rule = call.rule === undefined ? '' : ` (rule ${call.rule + 1})`;
  const approval = call.approval
    ? `: ${call.approval.state}${call.approval.decidedBy === undefined ? '' : ` by ${call.approval.decidedBy}`}`
    : '';
  return `#${call.position} ${what} ${call.decision}${rule}${approval} ${formatDuration(call.durationMs)} ${outcome(call)}`;
}

function outcome(call: CallRecord): string {
  if (call.error) return `error${call.error.code ? ` ${call.error.code}` : ''}: ${call.error.message}`;
  const result = call.result;
  if (!result) return call.ok ? 'ok' : 'error';
  const parts = [
    ...(result.status === undefined ? [] : [`${result.status}`]),
    ...(result.contentTypes.length === 0 ? [] : [result.contentTypes.join(', ')]),
    `${result.bytes} B`,
  ];
  return `${call.ok ? 'ok' : 'error'} ${parts.join(' ')}${result.truncated ? ' (result cut from the audit)' : ''}`;
}

function clip(text: string): string {
  return text.length <= INPUT_CHARS ? text : `${text.slice(0, INPUT_CHARS)}…`;
}
