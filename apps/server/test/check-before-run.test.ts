import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/server.ts';
import { listenLocal, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { httpClient } from './support/mcp-fixture.ts';

// The check before running, through a whole server: HTTP, WebSocket streams, MCP, a restart. An
// http tool whose local service counts its requests shows that a blocked program never acted.

const dir = mkdtempSync(join(tmpdir(), 'mci-check-'));
let service: Server;
let hits = 0;

/** A program whose first call acts, and whose third line names a tool that does not exist. */
const MISSPELT = `await tools.ping({ note: 'acted' });\nconst x = 1;\nawait tools.gret({ name: 'x' });`;

beforeAll(async () => {
  service = createHttpServer((_req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  const serviceUrl = await listenLocal(service);
  writeFileSync(
    join(dir, 'tools.yaml'),
    `schemaVersion: '1.0'
tools:
  - name: greet
    description: Greets someone.
    inputSchema:
      type: object
      properties: { name: { type: string }, loud: { type: boolean } }
      required: [name]
    execution: { type: text, text: 'hello {{props.name}}' }
  - name: strict
    inputSchema:
      type: object
      properties: { a: { type: string } }
      additionalProperties: false
    execution: { type: text, text: 'a={{props.a}}' }
  - name: ping
    inputSchema: { type: object, properties: { note: { type: string } } }
    execution: { type: http, method: GET, url: '${serviceUrl}/ping' }
`,
  );
});
afterAll(() => {
  service?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = (options: { db?: string; check?: 'block' | 'warn' | 'off' } = {}) =>
  createServer({
    port: 0,
    file: join(dir, 'tools.yaml'),
    logLevel: 'silent',
    concurrency: 1,
    allowNet: ['127.0.0.1'],
    ...options,
  });

const run = async (server: MciServer, body: Record<string, unknown>) => {
  const answer = await request(server.url, 'POST', '/processes', { block: true, ...body });
  expect(answer.status).toBe(201);
  return answer.body;
};

describe('check before running', () => {
  // One server with the default options for the tests that need no database, restart or mode.
  let shared: MciServer;
  beforeAll(async () => {
    shared = await start();
  });
  afterAll(async () => {
    await shared?.close({ graceMs: 0 });
  });

  it('ends a certainly wrong program failed with CHECK_FAILED before anything acts', async () => {
    const server = shared;
    hits = 0;
    const result = await run(server, { code: MISSPELT });
    expect(result).toMatchObject({
      status: 'failed',
      error: {
        name: 'CheckError',
        code: 'CHECK_FAILED',
        line: 3,
        column: 13,
        diagnostics: [
          {
            line: 3,
            column: 13,
            code: 2551,
            message: 'tools.gret does not exist. Did you mean tools.greet?',
          },
        ],
      },
    });
    expect(hits).toBe(0);
    const run1 = await request(server.url, 'GET', `/processes/${result.pid}/runs/1`);
    expect(run1.body).toMatchObject({ status: 'failed', error: { code: 'CHECK_FAILED' } });
    expect(run1.body.stderr).toBe('CheckError: the check found 1 error; the program did not run\n');
  });

  it('blocks a missing required property and a property a closed schema forbids, in one report', async () => {
    const server = shared;
    const result = await run(server, {
      code: `await tools.greet({ loud: true });\nawait tools.strict({ a: 'x', b: 2 });\nawait tools.greet({ name: 'x', extra: 1 });`,
    });
    expect(result.error.diagnostics).toEqual([
      { line: 1, column: 19, code: 2345, message: "tools.greet: input property 'name' is required." },
      {
        line: 2,
        column: 30,
        code: 2353,
        message: "tools.strict: input property 'b' is not in its input schema.",
      },
    ]);
    // greet's schema allows extra properties: what the compiler says of `extra` is a warning.
    expect(result.warnings).toMatchObject([{ line: 3, code: 2353 }]);
  });

  it('runs a program with type errors and passes them along as warnings, stored with the run', async () => {
    const db = join(dir, 'warnings.db');
    let pid: number;
    {
      await using server = await start({ db });
      const result = await run(server, { code: `const n: number = 'seven';\noutput(n);` });
      expect(result).toMatchObject({ status: 'success', outputs: ['seven'] });
      expect(result.warnings).toEqual([
        { line: 1, column: 7, code: 2322, message: "Type 'string' is not assignable to type 'number'." },
      ]);
      pid = result.pid;
    }
    await using again = await start({ db });
    const run1 = await request(again.url, 'GET', `/processes/${pid}/runs/1`);
    expect(run1.body.warnings).toMatchObject([{ line: 1, code: 2322 }]);
  });

  it('obeys the check mode of the process, kept across a restart for its next run', async () => {
    const db = join(dir, 'modes.db');
    hits = 0;
    let pid: number;
    {
      await using server = await start({ db });
      const warned = await run(server, { code: MISSPELT, check: 'warn' });
      // It ran: the first call acted, the misspelt one failed in the sandbox.
      expect(warned).toMatchObject({ status: 'failed', check: 'warn', warnings: [{ line: 3, code: 2551 }] });
      expect(warned.error.code).toBeUndefined();
      expect(hits).toBe(1);
      const off = await run(server, { code: `const n: number = 'x';`, check: 'off' });
      expect(off).toMatchObject({ status: 'success' });
      expect(off.warnings).toBeUndefined();
      pid = warned.pid;
    }
    await using again = await start({ db });
    const rerun = await request(again.url, 'POST', `/processes/${pid}/signals/run`, { block: true });
    expect(rerun.body).toMatchObject({ status: 'failed', check: 'warn', run: 2 });
    expect(hits).toBe(2);
  });

  it("follows the server's mode, and refuses a mode that is not one", async () => {
    await using server = await start({ check: 'off' });
    const result = await run(server, { code: `const n: number = 'x';\nreturn n;` });
    expect(result).toMatchObject({ status: 'success', outputs: ['x'] });
    expect(result.warnings).toBeUndefined();
    const bad = await request(server.url, 'POST', '/processes', { code: 'output(1)', check: 'strict' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'VALIDATION', path: 'check' });
  });

  it('tells the model what to fix in the response pipe of a stream, and takes a block attribute', async () => {
    const server = shared;
    const socket = await openJsonSocket(server.wsUrl);
    try {
      expect(await socket.request({ type: 'stream.start', streamId: 's1', check: 'block' })).toMatchObject({
        type: 'reply',
      });
      const text = [
        'Let me try.\n```ts exec=true\n',
        `${MISSPELT}\n`,
        '```\nAnd a loose one:\n```ts exec=true check=warn\n',
        `const n: number = 'x';\nthrow new Error(n);\n`,
        '```\n',
      ].join('');
      await socket.request({ type: 'stream.chunk', streamId: 's1', text });
      await socket.request({ type: 'stream.end', streamId: 's1' });
      const result = await socket.waitFor((m) => m.type === 'stream.result');
      expect(result.text).toContain('block 0');
      expect(result.text).toContain('line 3: tools.gret does not exist. Did you mean tools.greet?');
      // A failed run's warnings may explain it: they are listed (a success's are not).
      expect(result.text).toContain("warning: line 1: Type 'string' is not assignable to type 'number'.");
      const bad = await socket.request({ type: 'stream.start', streamId: 's2', check: 'yes' });
      expect(bad).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'check' });
    } finally {
      socket.close();
    }
  });

  it('answers run_code over MCP with the findings, and refuses a bad check argument', async () => {
    const server = shared;
    const client = await httpClient(server.url);
    try {
      const result = await client.callTool({ name: 'run_code', arguments: { code: MISSPELT } });
      expect(result.isError).toBe(true);
      const text = (result.content as Array<{ type: string; text?: string }>).map((c) => c.text).join('\n');
      expect(text).toContain('line 3: tools.gret does not exist. Did you mean tools.greet?');
      await expect(
        client.callTool({ name: 'run_code', arguments: { code: 'output(1)', check: 'maybe' } }),
      ).rejects.toThrow(/check must be block, warn or off/);
      const loose = await client.callTool({
        name: 'run_code',
        arguments: { code: `const n: number = 'x';\noutput(n);`, check: 'off' },
      });
      expect(loose.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
