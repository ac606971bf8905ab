import type { StateKeyInfo } from '@mci/protocol';
import { useState } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { formatBytes } from './byte-size.ts';
import { StateEntry } from './state-entry.tsx';
import './session-state.css';
import { ErrorText } from './error-text.tsx';

/**
 * The state of a session: each key with its value (see {@link StateEntry}), in key order, its total
 * size, and Delete per key. `onChanged` is called after a key was deleted.
 */
export function SessionState({
  session,
  state,
  onChanged,
}: {
  session: string;
  state: StateKeyInfo[];
  onChanged: () => void;
}) {
  const client = useClient();
  const [error, setError] = useState<string>();
  const total = state.reduce((sum, entry) => sum + entry.bytes, 0);
  return (
    <section className="session-state" aria-label="State">
      <p className="muted" role="status" aria-label="State size">
        {state.length === 0
          ? 'No state.'
          : `${state.length} ${state.length === 1 ? 'key' : 'keys'}, ${formatBytes(total)}`}
      </p>
      <ErrorText error={error} />
      {state.length > 0 && (
        <ul className="state-entries">
          {state.map((entry) => (
            <StateEntry
              key={entry.key}
              session={session}
              entry={entry}
              onDelete={(key) => {
                setError(undefined);
                client.sessions
                  .deleteState(session, key)
                  .then(onChanged)
                  .catch((caught: Error) => setError(caught.message));
              }}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
