import type { Session } from '@mci/protocol';
import { Link } from 'wouter';
import { formatDateTime } from './duration.ts';
import './session-state.css';

/** Sessions as a table, newest first: each id links to its session view; created and last used. */
export function SessionTable({ sessions, showOwner }: { sessions: Session[]; showOwner: boolean }) {
  return (
    <table className="session-table" aria-label="Sessions">
      <thead>
        <tr>
          <th scope="col">session</th>
          {showOwner && <th scope="col">owner</th>}
          <th scope="col">created</th>
          <th scope="col">last used</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((session) => (
          <tr key={session.id}>
            <td data-label="session">
              <Link href={`/sessions/${encodeURIComponent(session.id)}`} aria-label={`Session ${session.id}`}>
                {session.id}
              </Link>
            </td>
            {showOwner && <td data-label="owner">{session.owner}</td>}
            <td data-label="created">
              <time dateTime={session.createdAt}>{formatDateTime(session.createdAt)}</time>
            </td>
            <td data-label="last used">
              <time dateTime={session.updatedAt}>{formatDateTime(session.updatedAt)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
