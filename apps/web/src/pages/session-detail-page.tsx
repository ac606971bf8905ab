import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { formatDateTime } from '../components/duration.ts';
import { ProcessTable } from '../components/process-table.tsx';
import { SessionState } from '../components/session-state.tsx';
import { useClient } from '../connection/connection-context.ts';
import { useSession } from '../hooks/use-session.ts';

/**
 * One session: its owner and times, its processes (each links to its process view), its state (keys,
 * sizes, versions, expiry and values; Delete per key), Refresh, and Delete session after a confirm.
 * It reads the session again whenever one of its processes changes.
 */
export function SessionDetailPage({ id }: { id: string }) {
  const client = useClient();
  const [, navigate] = useLocation();
  const { detail, missing, error, refresh } = useSession(id);
  const [confirming, setConfirming] = useState(false);
  const [deleteError, setDeleteError] = useState<string>();
  const conversation = detail?.processes.find((process) => process.ref === `chat-${id}`) !== undefined;
  return (
    <main className="page page-session">
      <header className="page-header">
        <h1>
          Session <code>{id}</code>
        </h1>
        <button type="button" className="secondary" onClick={refresh}>
          Refresh
        </button>
        {detail !== undefined &&
          (confirming ? (
            <span className="session-confirm">
              <span>Delete this session and its state? Its processes stay.</span>
              <button
                type="button"
                className="danger"
                onClick={() => {
                  client.sessions.delete(id).then(
                    () => navigate('/sessions'),
                    (caught: Error) => setDeleteError(caught.message),
                  );
                }}
              >
                Delete
              </button>
              <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Delete session
            </button>
          ))}
      </header>
      {missing && (
        <p role="alert" className="error-text">
          No session {id}: it does not exist, was deleted, or is not yours.
        </p>
      )}
      {(error ?? deleteError) !== undefined && (
        <p role="alert" className="error-text">
          {error ?? deleteError}
        </p>
      )}
      {detail !== undefined && (
        <>
          <dl className="metadata" aria-label="Metadata">
            <dt>Owner</dt>
            <dd>{detail.owner}</dd>
            <dt>Created</dt>
            <dd>
              <time dateTime={detail.createdAt}>{formatDateTime(detail.createdAt)}</time>
            </dd>
            <dt>Last used</dt>
            <dd>
              <time dateTime={detail.updatedAt}>{formatDateTime(detail.updatedAt)}</time>
            </dd>
            {conversation && (
              <>
                <dt>Conversation</dt>
                <dd>
                  <Link href={`/chat/${id}`}>{id}</Link>
                </dd>
              </>
            )}
          </dl>
          <h2>State</h2>
          <SessionState session={id} state={detail.state} onChanged={refresh} />
          <h2>Processes</h2>
          {detail.processes.length === 0 ? (
            <p className="muted">No process left in this session.</p>
          ) : (
            <ProcessTable processes={detail.processes} />
          )}
        </>
      )}
      <p>
        <Link href="/sessions">All sessions</Link>
      </p>
    </main>
  );
}
