import { createSandboxPool } from '@mci/sandbox';
import { loadToolFile } from '@mci/schema';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_OPERATOR, type Principal } from '../src/auth/principal.ts';
import { createMcpHttp } from '../src/mcp/http-sessions.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import { makeToolFile } from './support/mcp-fixture.ts';

// The session registry of /mcp stays bounded: past a principal's cap its own least recently used
// session is closed, past the server's cap a new session is refused (nobody else's is closed), and a
// session idle for sessionIdleMs is closed; its client then gets 404 (the spec's cue to start a new
// session). The SDK's Client talks to the endpoint through its `fetch` option.

const fixture = makeToolFile();
const pool = createSandboxPool({ size: 1 });
const manager = await createProcessManager({ pool });
afterAll(async () => {
  await manager.shutdown({ graceMs: 0 });
  await pool.close();
  fixture.dispose();
});

async function endpoint(options: {
  maxSessions?: number;
  maxSessionsPerPrincipal?: number;
  sessionIdleMs?: number;
}) {
  const collection = await loadToolFile(fixture.file);
  const mcp = createMcpHttp({ manager, tools: collection.list(), authenticated: false, ...options });
  const connect = async (principal: Principal = LOCAL_OPERATOR) => {
    const client = new Client({ name: 'sessions-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
        fetch: (input, init) => mcp.handle(new Request(input, init), principal),
      }),
    );
    return client;
  };
  return { mcp, connect };
}

describe('MCP sessions over HTTP', () => {
  it("closes a principal's least recently used session past its cap", async () => {
    const { mcp, connect } = await endpoint({ maxSessionsPerPrincipal: 2 });
    const first = await connect();
    const second = await connect();
    await first.listTools();
    const third = await connect();
    expect(mcp.sessions).toBe(2);
    await expect(second.listTools()).rejects.toThrow(/404|not found/i);
    expect((await first.listTools()).tools.length).toBeGreaterThan(0);
    expect((await third.listTools()).tools.length).toBeGreaterThan(0);
    await mcp.close();
  });

  it("refuses a new session when the server is full, closing nobody else's", async () => {
    const { mcp, connect } = await endpoint({ maxSessions: 3, maxSessionsPerPrincipal: 2 });
    const alice: Principal = { id: 'alice', role: 'client' };
    const bob: Principal = { id: 'bob', role: 'client' };
    const a1 = await connect(alice);
    await connect(alice);
    const b1 = await connect(bob);
    await expect(connect({ id: 'carol', role: 'client' })).rejects.toThrow(/503|sessions open/);
    // Alice past her own cap closes her own oldest, and takes its place.
    const a3 = await connect(alice);
    await expect(a1.listTools()).rejects.toThrow(/404|not found/i);
    expect((await b1.listTools()).tools.length).toBeGreaterThan(0);
    expect((await a3.listTools()).tools.length).toBeGreaterThan(0);
    expect(mcp.sessions).toBe(3);
    await mcp.close();
  });

  it('closes a session idle for sessionIdleMs', async () => {
    const { mcp, connect } = await endpoint({ sessionIdleMs: 300 });
    const client = await connect();
    await client.listTools();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(mcp.sessions).toBe(0);
    await expect(client.listTools()).rejects.toThrow(/404|not found/i);
    await mcp.close();
  });
});
