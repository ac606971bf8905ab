import type { ProcessSnapshot } from '@mci/client';
import { useState } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { ApprovalActions } from './approval-actions.tsx';
import { ErrorText } from './error-text.tsx';

/**
 * Kill and Run buttons for one process: Kill while it is queued, running or suspended, Run (a new run)
 * once it is idle; Approve and Deny for each approval a suspended process waits for (not in the
 * compact table rows). The server decides who may: a client sees, and so signals, only its own
 * processes.
 */
export function ProcessActions({
  process,
  compact = false,
}: {
  process: ProcessSnapshot;
  compact?: boolean;
}) {
  const client = useClient();
  const [error, setError] = useState<string>();
  const send = (signal: 'kill' | 'run') => {
    setError(undefined);
    client.signal(process.pid, signal).catch((caught: Error) => setError(caught.message));
  };
  const killable = process.state === 'queued' || process.state === 'running' || process.state === 'suspended';
  const waiting = process.state === 'suspended' && !compact ? (process.pendingApprovals ?? []) : [];
  return (
    <span className={compact ? 'actions actions-compact' : 'actions'}>
      <button
        type="button"
        className="danger"
        disabled={!killable}
        aria-label={compact ? `Kill process ${process.pid}` : 'Kill'}
        onClick={() => send('kill')}
      >
        Kill
      </button>
      <button
        type="button"
        disabled={process.state !== 'idle'}
        aria-label={compact ? `Run process ${process.pid} again` : process.run === 0 ? 'Run' : 'Run again'}
        onClick={() => send('run')}
      >
        {process.run === 0 ? 'Run' : 'Run again'}
      </button>
      <ErrorText error={error} inline />
      {waiting.map((id) => (
        <ApprovalActions key={id} approvalId={id} label={`the call of process ${process.pid}`} />
      ))}
    </span>
  );
}
