import type { Session } from '@mci/protocol';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/** Sessions per page of `session.list` the console reads. */
const PAGE_SIZE = 50;

/** What {@link useSessions} returns. */
export interface SessionsView {
  /** The sessions loaded so far, newest first. */
  sessions: Session[];
  /** Whether older sessions are left to load. */
  hasMore: boolean;
  /** Loads the next page of older sessions. */
  loadMore: () => void;
  /** Reads the newest page again (the older pages loaded stay). */
  reload: () => void;
  /** False until the first page arrived. */
  ready: boolean;
  error: string | undefined;
}

/**
 * The sessions of the signed-in principal (an operator's: everyone's), newest first: the newest page,
 * and older ones a page at a time on `loadMore` (`session.list`, keyset-paged, so a session created
 * meanwhile never makes one repeat or go missing).
 */
export function useSessions(): SessionsView {
  const client = useClient();
  const [sessions, setSessions] = useState<Session[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string>();
  const loading = useRef(false);

  const read = useCallback(
    async (from: string | undefined) => {
      if (loading.current) return;
      loading.current = true;
      try {
        const page = await client.sessions.list({
          limit: PAGE_SIZE,
          ...(from !== undefined && { cursor: from }),
        });
        setSessions((previous) => {
          // A page replaces the copies it holds; the newest page goes on top of older ones loaded.
          const ids = new Set(page.items.map((session) => session.id));
          const kept = previous.filter((session) => !ids.has(session.id));
          return from === undefined ? [...page.items, ...kept] : [...kept, ...page.items];
        });
        if (from !== undefined || !ready) setCursor(page.nextCursor);
        setReady(true);
        setError(undefined);
      } catch (caught) {
        setError((caught as Error).message);
      } finally {
        loading.current = false;
      }
    },
    [client, ready],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: the first page is read once per client
  useEffect(() => {
    void read(undefined);
  }, [client]);

  return {
    sessions,
    hasMore: cursor !== undefined,
    loadMore: () => {
      if (cursor !== undefined) void read(cursor);
    },
    reload: () => void read(undefined),
    ready,
    error,
  };
}
