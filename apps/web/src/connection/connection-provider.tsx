import { connect, type MciClient } from '@mci/client';
import { type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, apiGet } from './api-fetch.ts';
import { ConnectionContext, type ConnectionValue, type Principal } from './connection-context.ts';
import { loadToken, saveToken } from './token-storage.ts';

/** Delay before trying again after a first connection failed, in ms. */
const RETRY_MS = 2000;

/**
 * Connects the console to the server it was served from (`@mci/client` over `/ws`, the token in
 * `?token=`), and signs in: a server with tokens answers 401 to a missing or wrong one, and the
 * console then shows its sign-in box. Once connected, the client reconnects by itself.
 */
export function ConnectionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState(loadToken);
  const [client, setClient] = useState<MciClient>();
  const [state, setState] = useState<ConnectionValue['state']>('connecting');
  const [principal, setPrincipal] = useState<Principal>();
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` changes to connect again
  useEffect(() => {
    let cancelled = false;
    let opened: MciClient | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const start = async () => {
      try {
        // The WebSocket upgrade's 401 is invisible to a page: ask the HTTP API whether the token is good.
        await apiGet('/tools', token);
        const next = await connect(location.origin, token === undefined ? {} : { token });
        if (cancelled) {
          await next.close();
          return;
        }
        opened = next;
        next.onStateChange((nextState) => setState(nextState));
        setClient(next);
        setPrincipal(next.principal);
        setState(next.state);
        setError(undefined);
      } catch (caught) {
        if (cancelled) return;
        if (caught instanceof ApiError && caught.code === 'UNAUTHORIZED') {
          setState('signed-out');
          setError(token === undefined ? undefined : caught.message);
          return;
        }
        setState('connecting');
        setError((caught as Error).message);
        retry = setTimeout(() => setAttempt((n) => n + 1), RETRY_MS);
      }
    };
    void start();
    return () => {
      cancelled = true;
      clearTimeout(retry);
      void opened?.close();
      setClient(undefined);
      setPrincipal(undefined);
    };
  }, [token, attempt]);

  const signIn = useCallback((next: string) => {
    saveToken(next);
    setState('connecting');
    setToken(next);
    setAttempt((n) => n + 1);
  }, []);
  const signOut = useCallback(() => {
    saveToken(undefined);
    setToken(undefined);
    setAttempt((n) => n + 1);
  }, []);

  const value = useMemo<ConnectionValue>(
    () => ({ client, state, principal, token, error, signIn, signOut }),
    [client, state, principal, token, error, signIn, signOut],
  );
  return <ConnectionContext.Provider value={value}>{children}</ConnectionContext.Provider>;
}
