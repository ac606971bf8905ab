import { type ReactNode, useEffect, useState } from 'react';
import { Redirect } from 'wouter';
import { useClient } from '../connection/connection-context.ts';

/**
 * The page at `/`: the chat (`children`) when the server hosts a model, else the Processes page
 * (a server started without `--model` cannot chat). A failed look-up shows the chat, which says why.
 */
export function HomePage({ children }: { children: ReactNode }) {
  const client = useClient();
  const [chat, setChat] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let active = true;
    client.chat.list().then(
      ({ models }) => active && setChat(models.length > 0),
      () => active && setChat(true),
    );
    return () => {
      active = false;
    };
  }, [client]);
  if (chat === undefined) return <main className="page">Loading…</main>;
  return chat ? children : <Redirect to="/processes" replace />;
}
