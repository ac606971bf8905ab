import { type ChildProcess, spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, MAIN, makeToolFile } from './support/mcp-fixture.ts';
import { mci } from './support/spawn-mci.ts';

// `mci serve --port 0` as a user starts it, the SDK's Client on its /mcp, and `mci ps` seeing the
// processes of the MCP calls (ref `mcp:<session id>`, or the client's own ref).

const fixture = makeToolFile();
let server: ChildProcess;
let url: string;
beforeAll(async () => {
  server = spawn(
    process.execPath,
    [
      '--conditions=@mci/source',
      '--disable-warning=ExperimentalWarning',
      MAIN,
      'serve',
      '--port',
      '0',
      '--file',
      fixture.file,
    ],
    // cwd: the default store (./.mci/mci.db) goes to the temporary directory.
    { cwd: fixture.dir, env: { ...process.env, MCI_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  url = await new Promise<string>((resolve, reject) => {
    server.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    server.once('exit', (code) => reject(new Error(`mci serve exited ${code}: ${stderr}`)));
  });
});
afterAll(async () => {
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
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
    const listing = await mci(['ps', '--url', url, '--format', 'json'], fixture.dir);
    expect(listing.code, listing.stderr).toBe(0);
    const processes = JSON.parse(listing.stdout) as Array<{ pid: number; ref?: string; status: string }>;
    const mine = processes.find((p) => p.pid === pid);
    expect(mine).toMatchObject({ status: 'success', ref: expect.stringMatching(/^mcp:[0-9a-f-]{36}$/) });
    expect(processes.find((p) => p.pid === (named.structuredContent as { pid: number }).pid)?.ref).toBe(
      'my-agent',
    );
  });
});
