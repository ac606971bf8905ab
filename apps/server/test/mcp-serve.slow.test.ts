import { type ServerProcess, startServerProcess } from '@mci/test-support';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, makeToolFile } from './support/mcp-fixture.ts';
import { mci } from './support/mci.ts';

// `mci serve --port 0` as a user starts it, the SDK's Client on its /mcp, and `mci ps` seeing the
// processes of the MCP calls (ref `mcp:<session id>`, or the client's own ref).

const fixture = makeToolFile();
let server: ServerProcess;
let url: string;
beforeAll(async () => {
  server = await startServerProcess({ args: ['--file', fixture.file], cwd: fixture.dir });
  url = server.url;
});
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  fixture.dispose();
});

describe('/mcp of mci serve', () => {
  let client: Client;
  beforeAll(async () => {
    client = await httpClient(url);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('runs code, and mci ps lists the process under the session ref and the client ref', async () => {
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'output("hi")' },
    })) as CallToolResult;
    const { pid } = result.structuredContent as { pid: number };
    const named = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'output(2)', ref: 'my-agent' },
    })) as CallToolResult;
    const listing = await mci(['ps', '--url', url, '--format', 'json'], { cwd: fixture.dir });
    expect(listing.code, listing.stderr).toBe(0);
    const processes = JSON.parse(listing.stdout) as Array<{ pid: number; ref?: string; status: string }>;
    const mine = processes.find((p) => p.pid === pid);
    expect(mine).toMatchObject({ status: 'success', ref: expect.stringMatching(/^mcp:[0-9a-f-]{36}$/) });
    expect(processes.find((p) => p.pid === (named.structuredContent as { pid: number }).pid)?.ref).toBe(
      'my-agent',
    );
  });
});
