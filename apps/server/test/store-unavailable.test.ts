import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../src/auth/authenticator.ts';
import { LimitsSchema } from '../src/config/config-schema.ts';
import { type Listener, listen } from '../src/listener.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import type { ProcessStore, StoreHealth } from '../src/processes/process-store.ts';
import { createMemoryStore } from '../src/store/memory-store.ts';
import { StoreError } from '../src/store/store-error.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { ManualPool } from './support/manual-pool.ts';

// A store that cannot commit (a full disk, a database gone): /healthz says so, and a change answers
// 503 STORE_UNAVAILABLE on HTTP and WebSocket instead of being acknowledged; reads still answer.

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

const MESSAGE = 'the process database cannot be written (disk full); writes are kept and retried';

/** An in-memory store whose commits fail once `fail()` is called. */
function failingStore(): { store: ProcessStore; fail(): void } {
  const memory = createMemoryStore();
  let down = false;
  const store: ProcessStore = {
    ...memory,
    async committed() {
      if (down) throw new StoreError('STORE_UNAVAILABLE', ':memory:', MESSAGE);
    },
    health: (): StoreHealth =>
      down ? { ok: false, code: 'STORE_UNAVAILABLE', message: MESSAGE } : { ok: true },
  };
  return { store, fail: () => (down = true) };
}

async function setup() {
  const { store, fail } = failingStore();
  const manager = await createProcessManager({ pool: new ManualPool(1), store });
  const listener: Listener = await listen({
    manager,
    authenticator: createAuthenticator([]),
    tools: [],
    limits: LimitsSchema.parse({}),
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
    storeHealth: () => store.health(),
  });
  open.push({ close: () => listener.close() });
  return { listener, fail };
}

const post = (listener: Listener, path: string, body: unknown) =>
  fetch(`${listener.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('a store that cannot commit', () => {
  it('turns /healthz to 503 store_unavailable, and creates and signals to 503 STORE_UNAVAILABLE', async () => {
    const { listener, fail } = await setup();
    expect((await fetch(`${listener.url}/healthz`)).status).toBe(200);
    const created = await post(listener, '/processes', { code: 'x', autorun: false });
    expect(created.status).toBe(201);
    const { pid } = (await created.json()) as { pid: number };

    fail();
    const health = await fetch(`${listener.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'store_unavailable', message: MESSAGE });
    const refused = await post(listener, '/processes', { code: 'y' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'STORE_UNAVAILABLE', error: MESSAGE });
    const signal = await post(listener, `/processes/${pid}/signals/run`, {});
    expect(signal.status).toBe(503);
    expect(await signal.json()).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // Reads need no commit.
    expect((await fetch(`${listener.url}/processes/${pid}`)).status).toBe(200);

    const client = await openJsonSocket(listener.wsUrl);
    open.push(client);
    expect(await client.request({ type: 'process.create', code: 'z' })).toMatchObject({
      type: 'error',
      code: 'STORE_UNAVAILABLE',
      message: MESSAGE,
    });
    expect(await client.request({ type: 'process.get', pid })).toMatchObject({ type: 'reply' });
  });
});
