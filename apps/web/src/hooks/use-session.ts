import { ClientError } from '@mci/client';
import type { SessionDetail } from '@mci/protocol';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/** What {@link useSession} returns. */
export interface SessionView {
  /** The session, its processes (newest first) and its state keys; undefined until read. */
  detail: SessionDetail | undefined;
  /** True when the server has no such session for this principal (none yet, deleted, or another's). */
  missing: boolean;
  /** Why the session could not be read (other than `NOT_FOUND`). */
  error: string | undefined;
  /** Reads the session again now. */
  refresh: () => void;
}

/** Wait this long after a process event of the session before reading it again (a burst: one read). */
const SETTLE_MS = 150;

/**
 * One session (`session.get`), kept live: read again whenever one of its processes changes state
 * (`subscribe {all: true}`, filtered by the snapshot's `session`), whenever `refreshKey` changes,
 * and on `refresh`. Values are not read here: see `useStateValue`.
 */
export function useSession(id: string | undefined, refreshKey?: unknown): SessionView {
  const client = useClient();
  const [detail, setDetail] = useState<SessionDetail>();
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const refresh = useCallback(() => setTick((n) => n + 1), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new session id starts from nothing
  useEffect(() => {
    setDetail(undefined);
    setMissing(false);
    setError(undefined);
  }, [id]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: tick and refreshKey ask for a new read
  useEffect(() => {
    if (id === undefined) return;
    let active = true;
    client.sessions.get(id).then(
      (read) => {
        if (!active) return;
        setDetail(read);
        setMissing(false);
        setError(undefined);
      },
      (caught: Error) => {
        if (!active) return;
        if (caught instanceof ClientError && caught.code === 'NOT_FOUND') {
          setDetail(undefined);
          setMissing(true);
          setError(undefined);
        } else setError(caught.message);
      },
    );
    return () => {
      active = false;
    };
  }, [client, id, tick, refreshKey]);

  useEffect(() => {
    if (id === undefined) return;
    const subscription = client.subscribe(
      { all: true },
      {
        onEvent: (event) => {
          if (event.type !== 'process' || event.session !== id) return;
          clearTimeout(timer.current);
          timer.current = setTimeout(refresh, SETTLE_MS);
        },
      },
    );
    return () => {
      subscription.close();
      clearTimeout(timer.current);
    };
  }, [client, id, refresh]);

  return { detail, missing, error, refresh };
}
