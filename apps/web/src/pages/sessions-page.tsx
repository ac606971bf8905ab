import { ErrorText } from '../components/error-text.tsx';
import { SessionTable } from '../components/session-table.tsx';
import { useConnection } from '../connection/connection-context.ts';
import { useSessions } from '../hooks/use-sessions.ts';

/**
 * The sessions of the signed-in principal (an operator: everyone's, with their owners), newest
 * first, each linking to its session view; older ones a page at a time ("Load older sessions").
 */
export function SessionsPage() {
  const { principal } = useConnection();
  const { sessions, hasMore, loadMore, reload, ready, error } = useSessions();
  return (
    <main className="page page-sessions">
      <header className="page-header">
        <h1>Sessions</h1>
        <p className="muted" role="status" aria-label="Session count">
          {ready
            ? `${sessions.length}${hasMore ? '+' : ''} ${sessions.length === 1 ? 'session' : 'sessions'}`
            : 'Loading…'}
        </p>
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
      </header>
      <p className="muted">
        A session groups the processes of one conversation or task and keeps their durable <code>state</code>.
      </p>
      <ErrorText error={error} />
      {ready && sessions.length === 0 ? (
        <p className="muted">
          No sessions yet: a chat conversation is one, and a process created with a <code>session</code> makes
          one.
        </p>
      ) : (
        <SessionTable sessions={sessions} showOwner={principal?.role === 'operator'} />
      )}
      {hasMore && (
        <button type="button" className="load-more" onClick={loadMore}>
          Load older sessions
        </button>
      )}
    </main>
  );
}
