import type { CallRecord } from '@mci/client';
import { formatDuration } from './duration.ts';

/** Longest input text a row shows (the whole input is in the row's title). */
const INPUT_CHARS = 160;

/** What was called: a tool's name, or `fetch` with its method and URL. */
function callOf(call: CallRecord): string {
  if (call.kind !== 'fetch') return call.name;
  const input = call.input as { method?: string; url?: string } | null;
  return `fetch ${input?.method ?? ''} ${input?.url ?? ''}`;
}

/** The input as one line of JSON (a cut input is the start of its JSON text). */
function inputOf(call: CallRecord): string {
  if (call.inputTruncated && typeof call.input === 'string') return `${call.input}… (cut)`;
  return JSON.stringify(call.input) ?? '';
}

/** How the call ended: the error, or what the result was (status, content types, size). */
function outcomeOf(call: CallRecord): string {
  if (call.error) return `${call.error.code ?? 'error'}: ${call.error.message}`;
  const result = call.result;
  if (!result) return call.ok ? 'ok' : 'error';
  const parts = [
    call.ok ? 'ok' : 'error',
    ...(result.status === undefined ? [] : [String(result.status)]),
    ...result.contentTypes,
    `${result.bytes} B`,
  ];
  return parts.join(' · ');
}

/** The policy decision, with the rule that made it (1-based, as the policies page counts). */
function decisionOf(call: CallRecord): string {
  return call.rule === undefined ? call.decision : `${call.decision} (rule ${call.rule + 1})`;
}

/** Who decided an approval, and how. */
function decidedOf(call: CallRecord): string {
  const approval = call.approval;
  if (!approval) return '';
  return approval.decidedBy === undefined ? approval.state : `${approval.state} by ${approval.decidedBy}`;
}

/**
 * The calls of one run as the server's audit records them (tool calls and fetches, by position):
 * what was called with which input, how it ended, how long it took, the policy decision and who
 * decided an approval.
 */
export function CallTable({ run, calls }: { run: number; calls: CallRecord[] }) {
  return (
    <table aria-label={`Calls of run ${run}`} className="call-table">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">call</th>
          <th scope="col">input</th>
          <th scope="col">outcome</th>
          <th scope="col">duration</th>
          <th scope="col">decision</th>
          <th scope="col">decided by</th>
        </tr>
      </thead>
      <tbody>
        {calls.map((call) => {
          const input = inputOf(call);
          return (
            <tr key={call.position} className={call.ok ? 'call' : 'call call-error'}>
              <td data-label="#">{call.position + 1}</td>
              <td data-label="call">
                <code className="call-name">{callOf(call)}</code>
              </td>
              <td data-label="input">
                <code className="call-input" title={input}>
                  {input.length > INPUT_CHARS ? `${input.slice(0, INPUT_CHARS)}…` : input}
                </code>
              </td>
              <td data-label="outcome" className="call-outcome">
                {outcomeOf(call)}
              </td>
              <td data-label="duration">{formatDuration(call.durationMs)}</td>
              <td data-label="decision">
                <span className={`call-decision call-decision-${call.decision}`}>{decisionOf(call)}</span>
              </td>
              <td data-label="decided by">{decidedOf(call)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
