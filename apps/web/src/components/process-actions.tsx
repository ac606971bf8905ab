import type { ProcessSnapshot } from '@mci/client';
import { useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/**
 * Kill and Run buttons for one process: Kill while it is queued or running, Run (a new run) once it is
 * idle. The server decides who may: a client sees, and so signals, only its own processes.
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
  const killable = process.state === 'queued' || process.state === 'running';
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
      {error !== undefined && (
        <span role="alert" className="error-text">
          {error}
        </span>
      )}
    </span>
  );
}
