import type { StateKeyInfo } from '@mci/protocol';
import { useState } from 'react';
import { useStateValue } from '../hooks/use-state-value.ts';
import { formatBytes } from './byte-size.ts';
import { formatDateTime } from './duration.ts';
import { OutputView } from './output-view.tsx';

/** Values up to this size (encoded, in bytes) are read when shown; larger ones on "Show value". */
const AUTO_READ_BYTES = 64 * 1024;

/**
 * One state entry of a session: its key, size, version and expiry, its value drawn as an output
 * (read when the entry is shown, or on "Show value" for a large one, and again at each new version),
 * and a Delete button.
 */
export function StateEntry({
  session,
  entry,
  onDelete,
}: {
  session: string;
  entry: StateKeyInfo;
  onDelete: (key: string) => void;
}) {
  const [asked, setAsked] = useState(false);
  const enabled = asked || entry.bytes <= AUTO_READ_BYTES;
  const { encoded, error } = useStateValue(session, entry.key, entry.version, enabled);
  return (
    <li className="state-entry" aria-label={`Key ${entry.key}`}>
      <div className="state-entry-header">
        <code className="state-key">{entry.key}</code>
        <span className="muted state-meta">
          {formatBytes(entry.bytes)} · version {entry.version}
          {entry.expiresAt !== undefined && (
            <>
              {' · expires '}
              <time dateTime={entry.expiresAt}>{formatDateTime(entry.expiresAt)}</time>
            </>
          )}
        </span>
        <button
          type="button"
          className="link-button danger-link state-delete"
          aria-label={`Delete key ${entry.key}`}
          onClick={() => onDelete(entry.key)}
        >
          Delete
        </button>
      </div>
      {!enabled && (
        <button type="button" className="secondary" onClick={() => setAsked(true)}>
          Show value ({formatBytes(entry.bytes)})
        </button>
      )}
      {error !== undefined && <p className="error-text">{error}</p>}
      {encoded !== undefined && (
        <OutputView value={encoded.value} index={0} label={`Value of ${entry.key}`} />
      )}
    </li>
  );
}
