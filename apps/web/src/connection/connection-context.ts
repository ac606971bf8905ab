import type { ConnectionState, MciClient } from '@mci/client';
import { createContext, useContext } from 'react';

/** Who the server takes the console's user for (from its hello). */
export interface Principal {
  id: string;
  role: 'client' | 'operator';
}

/** The console's connection to the server, shared by every page. */
export interface ConnectionValue {
  /** The connected client; undefined until the first hello. */
  client: MciClient | undefined;
  /** `connecting` (first attempt), `open`, `reconnecting`, `closed`, or `signed-out` (a token is needed). */
  state: ConnectionState | 'connecting' | 'signed-out';
  principal: Principal | undefined;
  token: string | undefined;
  /** Why the last sign-in or connection attempt failed. */
  error: string | undefined;
  signIn(token: string): void;
  signOut(): void;
}

export const ConnectionContext = createContext<ConnectionValue | undefined>(undefined);

/** The console's connection. @throws Error outside a ConnectionProvider */
export function useConnection(): ConnectionValue {
  const value = useContext(ConnectionContext);
  if (value === undefined) throw new Error('useConnection needs a ConnectionProvider');
  return value;
}

/** The connected client (pages render only once there is one). @throws Error before the first hello */
export function useClient(): MciClient {
  const { client } = useConnection();
  if (client === undefined) throw new Error('useClient needs an open connection');
  return client;
}
