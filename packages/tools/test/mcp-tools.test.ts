import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaError, ToolsetFileSchema } from '@mci/schema';
import { describe, expect, it, vi } from 'vitest';
import { createToolRunner, loadTools, mcpCachePath, ToolError } from '../src/index.ts';
import { everythingServer } from './helpers/everything-server.ts';
import { startMcpHttpServer } from './helpers/mcp-http-server.ts';
import { childPids } from './helpers/processes.ts';
import { toolDir } from './helpers/tool-dir.ts';
import { expectCanceled } from './helpers/results.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const EVERYTHING = 'server-everything';

// Each server-everything start costs a second or more on a busy machine: allow for several per test.
describe('MCP server tools (server-everything over stdio)', { timeout: 60_000 }, () => {
  it('lists the tools, writes the cache, and reuses it without connecting until it expires', async () => {
    await using dir = await toolDir({ mcp_servers: { everything: everythingServer() } });
    const now = Date.UTC(2026, 0, 1);
    const collection = await loadTools(dir.file, { now: () => now });

    const echo = collection.get('echo');
    expect(echo).toMatchObject({
      name: 'echo',
      description: 'Echoes back the input string',
      toolset: 'everything',
      tags: ['readOnly', 'idempotent'],
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      execution: { type: 'mcp', serverName: 'everything', toolName: 'echo' },
      inputSchema: { type: 'object', required: ['message'] },
    });
    expect(collection.get('get-sum')).toBeDefined();
    const listed = collection.tools.length;
    expect(listed).toBeGreaterThan(5);

    const cachePath = mcpCachePath(join(dir.dir, 'mci'), 'everything');
    expect(cachePath).toBe(join(dir.dir, 'mci', 'mcp', 'everything.mci.json'));
    const cache = JSON.parse(await readFile(cachePath, 'utf8'));
    expect(cache.expiresAt).toBe(new Date(now + 30 * DAY_MS).toISOString());
    const { expiresAt: _expiresAt, ...toolset } = cache;
    expect(ToolsetFileSchema.safeParse(toolset).success).toBe(true);
    expect(cache.tools).toHaveLength(listed);

    // Break the server command: an unexpired cache is used without connecting.
    await writeFile(
      dir.file,
      JSON.stringify({
        schemaVersion: '1.0',
        mcp_servers: { everything: { command: 'mci-no-such-server' } },
      }),
    );
    const cached = await loadTools(dir.file, { now: () => now + 29 * DAY_MS });
    expect(cached.tools.map((t) => t.name)).toEqual(collection.tools.map((t) => t.name));

    // Once expired, the server is asked again, and its failure names it.
    const error = await loadTools(dir.file, { now: () => now + 31 * DAY_MS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).code).toBe('MCP_SERVER_FAILED');
    expect((error as SchemaError).message).toContain('MCP server "everything"');
    expect((error as SchemaError).message).toContain('mci-no-such-server');
  });

  it('honours expDays and applies filters to the listed tools while caching them all', async () => {
    await using dir = await toolDir({
      mcp_servers: {
        everything: everythingServer({ expDays: 2, filter: 'only', filterValue: 'echo, get-sum' }),
      },
    });
    const now = Date.UTC(2026, 5, 1);
    const collection = await loadTools(dir.file, { now: () => now });
    expect(collection.tools.map((t) => t.name)).toEqual(['echo', 'get-sum']);
    const cachePath = mcpCachePath(join(dir.dir, 'mci'), 'everything');
    const first = JSON.parse(await readFile(cachePath, 'utf8'));
    expect(first.expiresAt).toBe(new Date(now + 2 * DAY_MS).toISOString());
    expect(first.tools.length).toBeGreaterThan(2);

    // Three days later the cache has expired: the server is listed again and the expiry moves on.
    await loadTools(dir.file, { now: () => now + 3 * DAY_MS });
    const second = JSON.parse(await readFile(cachePath, 'utf8'));
    expect(second.expiresAt).toBe(new Date(now + 5 * DAY_MS).toISOString());

    await writeFile(
      dir.file,
      JSON.stringify({
        schemaVersion: '1.0',
        mcp_servers: { everything: everythingServer({ filter: 'withoutTags', filterValue: 'readOnly' }) },
      }),
    );
    const writable = await loadTools(dir.file, { now: () => now + 3 * DAY_MS });
    expect(writable.tools.length).toBeGreaterThan(0);
    expect(writable.tools.every((t) => !t.tags.includes('readOnly'))).toBe(true);
    expect(writable.get('echo')).toBeUndefined();
  });

  it('calls tools over one lazily opened, shared connection, passing results through', async () => {
    await using dir = await toolDir({ mcp_servers: { everything: everythingServer() } });
    const collection = await loadTools(dir.file);
    expect(childPids(EVERYTHING)).toEqual([]);
    const runner = createToolRunner(collection);
    try {
      const results = await Promise.all([
        runner.execute('echo', { message: 'one' }),
        runner.execute('echo', { message: 'two' }),
        runner.execute('get-sum', { a: 2, b: 40 }),
      ]);
      expect(results.map((r) => r.content)).toEqual([
        [{ type: 'text', text: 'Echo: one' }],
        [{ type: 'text', text: 'Echo: two' }],
        [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }],
      ]);
      expect(results[0]).toMatchObject({
        isError: false,
        metadata: { mcp_server: 'everything', mcp_tool: 'echo' },
      });
      expect(childPids(EVERYTHING)).toHaveLength(1);

      const structured = await runner.execute('get-structured-content', { location: 'Chicago' });
      expect(structured.isError, structured.error).toBe(false);
      expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });

      const image = await runner.execute('get-tiny-image');
      expect(image.content).toContainEqual({
        type: 'image',
        data: expect.any(String),
        mimeType: 'image/png',
      });

      const invalid = await runner.execute('get-sum', { a: 'x' });
      expect(invalid.error).toBe('Invalid props: props.b is required; props.a must be number (got string)');
    } finally {
      await runner.close();
    }
    await vi.waitFor(() => expect(childPids(EVERYTHING)).toEqual([]), { timeout: 5000 });
  });

  it('reconnects once when the server went away', async () => {
    await using dir = await toolDir({ mcp_servers: { everything: everythingServer() } });
    await using runner = createToolRunner(await loadTools(dir.file));
    expect((await runner.execute('echo', { message: 'a' })).isError).toBe(false);
    const [pid] = childPids(EVERYTHING);
    process.kill(pid!, 'SIGKILL');
    await vi.waitFor(() => expect(childPids(EVERYTHING)).toEqual([]), { timeout: 5000 });
    const again = await runner.execute('echo', { message: 'b' });
    expect(again.isError, again.error).toBe(false);
    expect(again.content).toEqual([{ type: 'text', text: 'Echo: b' }]);
    expect(childPids(EVERYTHING)).toHaveLength(1);
  });

  it('repeats a call cut off by a crash only for read-only or idempotent tools', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/crashing-server.ts', import.meta.url));
    await using dir = await toolDir({ tools: [{ name: 'noop', execution: { type: 'text', text: '' } }] });
    const log = join(dir.dir, 'calls.log');
    await writeFile(
      dir.file,
      JSON.stringify({
        schemaVersion: '1.0',
        mcp_servers: {
          crashing: { command: process.execPath, args: [fixture], env: { MCI_TEST_CALL_LOG: log } },
        },
      }),
    );
    await using runner = createToolRunner(await loadTools(dir.file));

    const charge = await runner.execute('charge');
    expect(charge.isError).toBe(true);
    expect(charge.error).toContain('the connection closed during the call; it was not repeated');
    expect(await readFile(log, 'utf8')).toBe('charge\n');
    // The next call reconnects.
    expect((await runner.execute('charge')).content).toEqual([{ type: 'text', text: 'charge ran 2 times' }]);

    const lookup = await runner.execute('lookup');
    expect(lookup.isError, lookup.error).toBe(false);
    expect(lookup.content).toEqual([{ type: 'text', text: 'lookup ran 2 times' }]);
  });

  it('cancels a call still waiting for its server to answer, and close stops that server', async () => {
    // A server that never answers `initialize`; its tool comes from an unexpired cache, so loading
    // does not connect and the call is the first to wait for it.
    const mute = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] };
    await using dir = await toolDir({ mcp_servers: { mute } });
    const tool = { name: 'hang', execution: { type: 'mcp', serverName: 'mute', toolName: 'hang' } };
    await dir.write(
      join('mci', 'mcp', 'mute.mci.json'),
      JSON.stringify({
        schemaVersion: '1.0',
        metadata: { name: 'mute', description: 'cached' },
        tools: [tool],
        expiresAt: new Date(Date.now() + DAY_MS).toISOString(),
      }),
    );
    const runner = createToolRunner(await loadTools(dir.file));
    const controller = new AbortController();
    const pending = runner.execute('hang', {}, { signal: controller.signal });
    await vi.waitFor(() => expect(childPids('setInterval').length).toBeGreaterThan(0), { timeout: 10_000 });
    controller.abort();
    expectCanceled(await pending);
    await runner.close();
    await vi.waitFor(() => expect(childPids('setInterval')).toEqual([]), { timeout: 10_000 });
  });

  it('names the server that cannot start', async () => {
    await using dir = await toolDir({
      mcp_servers: {
        broken: { command: process.execPath, args: ['-e', 'console.error("bad config"); process.exit(3)'] },
      },
    });
    const error = await loadTools(dir.file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).message).toMatch(
      /MCP server "broken" failed: MCP server "broken" could not be started: .*bad config/,
    );
  });

  it('throws TOOL_NOT_FOUND for unknown tools only', async () => {
    await using dir = await toolDir({ tools: [{ name: 'hello', execution: { type: 'text', text: 'hi' } }] });
    await using runner = createToolRunner(await loadTools(dir.file));
    const error = await runner.execute('echo').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('TOOL_NOT_FOUND');
    expect((error as ToolError).message).toBe('Tool "echo" not found (available: hello)');
  });
});

describe('MCP server tools over Streamable HTTP', () => {
  it('lists every page, sends templated headers, passes isError and structuredContent through', async () => {
    await using server = await startMcpHttpServer();
    await using dir = await toolDir({
      mcp_servers: {
        remote: {
          type: 'http',
          url: '{{env.MCI_TEST_MCP_URL}}',
          headers: { Authorization: 'Bearer {{env.MCI_TEST_MCP_TOKEN}}' },
        },
      },
    });
    const env = { MCI_TEST_MCP_URL: server.url, MCI_TEST_MCP_TOKEN: 'sekret' };
    const collection = await loadTools(dir.file, { env });
    expect(collection.tools.map((t) => t.name)).toEqual(['add', 'fail', 'structured', 'wait', 'whoami']);
    expect(server.methods.filter((m) => m === 'tools/list')).toHaveLength(3);
    expect(collection.get('add')?.tags).toEqual(['readOnly']);
    expect(collection.get('fail')?.tags).toEqual(['destructive']);
    expect(server.authorizations.every((a) => a === 'Bearer sekret')).toBe(true);

    const initializeBefore = server.methods.filter((m) => m === 'initialize').length;
    await using runner = createToolRunner(collection, { env });
    const [sum, failed, structured, who] = await Promise.all([
      runner.execute('add', { a: 1, b: 2 }),
      runner.execute('fail'),
      runner.execute('structured'),
      runner.execute('whoami'),
    ]);
    expect(server.methods.filter((m) => m === 'initialize').length - initializeBefore).toBe(1);
    expect(sum.content).toEqual([{ type: 'text', text: '3' }]);
    expect(failed).toEqual({
      isError: true,
      error: 'it failed on purpose',
      content: [{ type: 'text', text: 'it failed on purpose' }],
      metadata: { mcp_server: 'remote', mcp_tool: 'fail' },
    });
    expect(structured.structuredContent).toEqual({ n: 1 });
    expect(who.content).toEqual([{ type: 'text', text: 'Bearer sekret' }]);
  });

  it('starts a new session when the server forgot the old one', async () => {
    await using server = await startMcpHttpServer({ sessions: true });
    await using dir = await toolDir({ mcp_servers: { remote: { type: 'http', url: server.url } } });
    await using runner = createToolRunner(await loadTools(dir.file));
    expect((await runner.execute('add', { a: 1, b: 1 })).content).toEqual([{ type: 'text', text: '2' }]);
    const initialized = server.methods.filter((m) => m === 'initialize').length;
    server.forgetSessions();
    const again = await runner.execute('add', { a: 2, b: 3 });
    expect(again.isError, again.error).toBe(false);
    expect(again.content).toEqual([{ type: 'text', text: '5' }]);
    expect(server.methods.filter((m) => m === 'initialize').length).toBe(initialized + 1);
  });

  it('cancels a call promptly', async () => {
    await using server = await startMcpHttpServer();
    await using dir = await toolDir({ mcp_servers: { remote: { type: 'http', url: server.url } } });
    await using runner = createToolRunner(await loadTools(dir.file));
    const controller = new AbortController();
    const pending = runner.execute('wait', {}, { signal: controller.signal });
    await vi.waitFor(() => expect(server.methods).toContain('tools/call'), { timeout: 10_000 });
    controller.abort();
    expectCanceled(await pending);
    // The connection stays usable.
    expect((await runner.execute('add', { a: 2, b: 2 })).content).toEqual([{ type: 'text', text: '4' }]);
  });

  it('cancels calls in flight when the runner signal aborts or the runner closes', async () => {
    await using server = await startMcpHttpServer();
    await using dir = await toolDir({ mcp_servers: { remote: { type: 'http', url: server.url } } });
    const collection = await loadTools(dir.file);
    const controller = new AbortController();
    const aborted = createToolRunner(collection, { signal: controller.signal });
    const pending = aborted.execute('wait', {});
    await vi.waitFor(() => expect(server.methods).toContain('tools/call'), { timeout: 10_000 });
    controller.abort(new Error('shutting down'));
    expectCanceled(await pending, 'Execution canceled: shutting down');
    await aborted.close();

    const closed = createToolRunner(collection);
    const calls = server.methods.filter((m) => m === 'tools/call').length;
    const inFlight = closed.execute('wait', {});
    await vi.waitFor(() => expect(server.methods.filter((m) => m === 'tools/call')).toHaveLength(calls + 1), {
      timeout: 10_000,
    });
    await closed.close();
    expectCanceled(await inFlight, 'Execution canceled: the tool runner was closed');
  });
});
