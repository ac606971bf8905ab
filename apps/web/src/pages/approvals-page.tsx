import type { Approval, ApprovalState } from '@mci/client';
import { useState } from 'react';
import { Link } from 'wouter';
import { ApprovalActions } from '../components/approval-actions.tsx';
import { ErrorText } from '../components/error-text.tsx';
import { useApprovals } from '../hooks/use-approvals.ts';

const STATES: Array<ApprovalState | 'all'> = ['pending', 'approved', 'denied', 'expired', 'canceled', 'all'];

/** What the approval asks for: the tool with its input (or the request of a `fetch`). */
function callOf(approval: Approval): string {
  if (approval.kind === 'fetch') return `${approval.method} ${approval.url}`;
  return `${approval.tool}(${approval.input === undefined ? '' : JSON.stringify(approval.input)})`;
}

const time = (iso: string | undefined) => (iso === undefined ? '' : new Date(iso).toLocaleTimeString());

/**
 * The approvals suspended processes wait for (docs/approvals.md), live, newest first: pending ones
 * with Approve and Deny, decided ones with who decided and why; older ones a page at a time.
 */
export function ApprovalsPage() {
  const [state, setState] = useState<ApprovalState | 'all'>('pending');
  const { approvals, hasMore, loadMore, error } = useApprovals(state === 'all' ? undefined : state);
  return (
    <main className="page page-approvals">
      <header className="page-header">
        <h1>Approvals</h1>
        <label className="inline-label">
          State
          <select value={state} onChange={(event) => setState(event.target.value as ApprovalState | 'all')}>
            {STATES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        <p className="muted" role="status" aria-label="Approval count">
          {approvals === undefined
            ? 'Loading…'
            : `${approvals.length} ${state === 'all' ? '' : `${state} `}approvals`}
        </p>
      </header>
      <ErrorText error={error} />
      {approvals !== undefined && approvals.length === 0 && (
        <p className="muted">
          {state === 'pending'
            ? 'No process waits for an approval.'
            : `No ${state === 'all' ? '' : `${state} `}approvals.`}
        </p>
      )}
      {approvals !== undefined && approvals.length > 0 && (
        <table aria-label="Approvals" className="approval-table">
          <thead>
            <tr>
              <th scope="col">process</th>
              <th scope="col">call</th>
              <th scope="col">state</th>
              <th scope="col">asked</th>
              <th scope="col">{state === 'pending' ? 'expires' : 'decided'}</th>
              <th scope="col">actions</th>
            </tr>
          </thead>
          <tbody>
            {approvals.map((approval) => (
              <tr key={approval.id} aria-label={`Approval ${approval.id}`}>
                <td>
                  <Link href={`/processes/${approval.pid}`}>{approval.pid}</Link>
                  <span className="muted"> · {approval.principal}</span>
                </td>
                <td>
                  <code className="approval-call">{callOf(approval)}</code>
                </td>
                <td>{approval.state}</td>
                <td>{time(approval.createdAt)}</td>
                <td>
                  {approval.state === 'pending'
                    ? time(approval.expiresAt)
                    : `${time(approval.decidedAt)}${approval.decidedBy === undefined ? '' : ` by ${approval.decidedBy}`}${approval.reason === undefined ? '' : `: ${approval.reason}`}`}
                </td>
                <td>
                  {approval.state === 'pending' && (
                    <ApprovalActions
                      approvalId={approval.id}
                      label={`${callOf(approval)} of process ${approval.pid}`}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {hasMore && (
        <button type="button" onClick={loadMore}>
          Load older approvals
        </button>
      )}
    </main>
  );
}
