import WebSocket from 'ws';

/** A server message as the tests read it. */
// biome-ignore lint/suspicious/noExplicitAny: tests read server messages field by field.
export type Json = Record<string, any>;

/**
 * A raw WebSocket client for server tests, opened on `wsUrl` (with a bearer `token`), resolved once
 * the server's `hello` arrived: requests with ids, waits for a message, and every message it got.
 */
export async function openJsonSocket(wsUrl: string, token?: string) {
  const ws = new WebSocket(wsUrl, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const messages: Json[] = [];
  const waiters: Array<{ test: (m: Json) => boolean; resolve: (m: Json) => void }> = [];
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Json;
    messages.push(message);
    for (const waiter of [...waiters]) {
      if (waiter.test(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  let next = 1;
  const waitFor = (test: (m: Json) => boolean) =>
    new Promise<Json>((resolve) => {
      const found = messages.find(test);
      if (found) resolve(found);
      else waiters.push({ test, resolve });
    });
  await waitFor((m) => m.type === 'hello');
  return {
    messages,
    waitFor,
    async request(body: Json): Promise<Json> {
      const id = next++;
      ws.send(JSON.stringify({ ...body, id }));
      return waitFor((m) => (m.type === 'reply' || m.type === 'error') && m.id === id);
    },
    close: () => ws.close(),
  };
}

