import { useConnection } from '../connection/connection-context.ts';

const LABELS = {
  connecting: 'Connecting…',
  open: 'Connected',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
  'signed-out': 'Signed out',
} as const;

/** The connection's state, announced politely: visible while reconnecting. */
export function ConnectionBadge() {
  const { state, principal, token, signOut } = useConnection();
  return (
    <div className="connection">
      <span role="status" aria-label="Connection" className={`connection-state connection-${state}`}>
        {LABELS[state]}
      </span>
      {principal !== undefined && (
        <span className="muted principal" title={`signed in as ${principal.id}`}>
          {principal.id} ({principal.role})
        </span>
      )}
      {token !== undefined && state !== 'signed-out' && (
        <button type="button" className="link-button" onClick={signOut}>
          Sign out
        </button>
      )}
    </div>
  );
}
