import { useState } from 'react';
import { Link } from 'wouter';
import { SessionState } from '../components/session-state.tsx';
import { useSession } from '../hooks/use-session.ts';
import '../components/session-state.css';
import { ErrorText } from '../components/error-text.tsx';

/** Screens at least this wide show the panel open at first; narrower ones show it closed. */
const WIDE = '(min-width: 1100px)';

/**
 * The durable `state` of a conversation (its session: the conversation id) beside it: a collapsible
 * panel, open at first on wide screens, read again after each run of the conversation's blocks and
 * whenever `turnKey` changes (a turn starts or ends).
 */
export function ConversationState({ conversationId, turnKey }: { conversationId: string; turnKey: unknown }) {
  const { detail, missing, error, refresh } = useSession(conversationId, turnKey);
  const [open, setOpen] = useState(() => window.matchMedia(WIDE).matches);
  const count = detail?.state.length ?? 0;
  return (
    <details
      className="chat-state"
      open={open}
      onToggle={(event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>Session state{count > 0 && ` (${count})`}</summary>
      <section aria-label="Session state">
        <p className="chat-state-links">
          <Link href={`/sessions/${encodeURIComponent(conversationId)}`}>Open session</Link>{' '}
          <button type="button" className="link-button" onClick={refresh}>
            Refresh
          </button>
        </p>
        {missing && (
          <p className="muted">
            No state yet: a block's <code>state.set(key, value)</code> keeps a value for the next blocks.
          </p>
        )}
        <ErrorText error={error} />
        {detail !== undefined && (
          <SessionState session={conversationId} state={detail.state} onChanged={refresh} />
        )}
      </section>
    </details>
  );
}
