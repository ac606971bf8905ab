import { useState } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { ErrorText } from './error-text.tsx';

/**
 * Approve and Deny buttons for one pending approval, with an optional reason. The server decides who
 * may (an operator, or the owner of the process) and answers `NOT_PENDING` once someone decided.
 */
export function ApprovalActions({ approvalId, label }: { approvalId: string; label: string }) {
  const client = useClient();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const decide = (decision: 'approve' | 'deny') => {
    setError(undefined);
    setBusy(true);
    const options = reason.trim() === '' ? {} : { reason: reason.trim() };
    (decision === 'approve' ? client.approve(approvalId, options) : client.deny(approvalId, options))
      .catch((caught: Error) => setError(caught.message))
      .finally(() => setBusy(false));
  };
  return (
    <span className="actions approval-actions">
      <input
        type="text"
        className="approval-reason"
        placeholder="Reason (optional)"
        aria-label={`Reason for ${label}`}
        value={reason}
        onChange={(event) => setReason(event.target.value)}
      />
      <button type="button" disabled={busy} aria-label={`Approve ${label}`} onClick={() => decide('approve')}>
        Approve
      </button>
      <button
        type="button"
        className="danger"
        disabled={busy}
        aria-label={`Deny ${label}`}
        onClick={() => decide('deny')}
      >
        Deny
      </button>
      <ErrorText error={error} inline />
    </span>
  );
}
