import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { DRAW_PNG_PROGRAM, PNG_SIGNATURE } from '@mci/test-support';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/index.ts';
import { listenLocal } from './support/http.ts';
import { httpClient } from './support/mcp-fixture.ts';
import type { Json } from './support/serve-process.ts';

// Pictures and files as run results, end to end on a real server with an SQLite file: a program
// draws a PNG and makes files, a tool answers a picture; the run record points at the files, GET
// /processes/:pid/runs/:n/files/:name serves them to their owner only, with headers that never let a
// file act as a page of the server; and run_code over MCP returns image and resource_link items.
// run-files-durable.slow.test.ts serves them after a kill -9 and a restart.

const dir = mkdtempSync(join(tmpdir(), 'mci-files-'));
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const picture = createHttpServer((_req, res) =>
  res.writeHead(200, { 'Content-Type': 'image/png' }).end(PIXEL),
);
let server: MciServer;
const TOKENS = [
  { token: 'alice-token', role: 'client' as const, id: 'alice' },
  { token: 'mallory-token', role: 'client' as const, id: 'mallory' },
];

beforeAll(async () => {
  const pictureUrl = await listenLocal(picture);
  writeFileSync(
    join(dir, 'tools.yaml'),
    `schemaVersion: '1.0'
tools:
  - name: pixel
    description: A one-pixel PNG from a local service.
    execution: { type: http, method: GET, url: '${pictureUrl}/pixel.png' }
`,
  );
  server = await createServer({
    file: join(dir, 'tools.yaml'),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
    // Files are made and served after the program runs: one worker, no compiler checking first.
    concurrency: 1,
    check: 'off',
    tokens: TOKENS,
    db: join(dir, 'mci.db'),
  });
});
afterAll(async () => {
  await server?.close({ graceMs: 0 });
  picture.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, token = 'alice-token') =>
  fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });

async function runBlocking(code: string, token = 'alice-token'): Promise<Json> {
  const response = await fetch(`${server.url}/processes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ code, block: true }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Json;
}

/** Checks `bytes` are a PNG whose IDAT inflates (the zlib stream and its Adler-32 are right). */
function expectPng(bytes: Uint8Array): void {
  expect(Uint8Array.from(bytes.subarray(0, 8))).toEqual(PNG_SIGNATURE);
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(33);
  expect(Buffer.from(bytes.subarray(37, 41)).toString()).toBe('IDAT');
  expect(inflateSync(bytes.subarray(41, 41 + length)).length).toBe(4 * (1 + 4 * 3));
}

const FILES_PROGRAM = `${DRAW_PNG_PROGRAM}
output.file('report.csv', 'a,b\\n1,2\\n', 'text/csv');
output.file('evil.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml');
output.file('page.html', '<script>alert(document.cookie)</script>', 'text/html');
`;

describe('pictures and files of a run', () => {
  let pid: number;
  let result: Json;
  beforeAll(async () => {
    result = await runBlocking(FILES_PROGRAM);
    pid = result.pid;
  });

  it('are output values: the picture inline, the files as links to the files route', () => {
    expect(result.status).toBe('success');
    const [image, ...files] = result.outputs;
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expectPng(Buffer.from(image.data, 'base64'));
    const link = (name: string, mimeType: string, size: number) => ({
      type: 'file',
      name,
      mimeType,
      size,
      uri: `/processes/${pid}/runs/1/files/${name}`,
    });
    expect(files).toEqual([
      link('square.png', 'image/png', expect.any(Number)),
      link('report.csv', 'text/csv', 8),
      link('evil.svg', 'image/svg+xml', expect.any(Number)),
      link('page.html', 'text/html', 39),
    ]);
  });

  it('serves a file with its type, inline for a picture, nosniff and a CSP sandbox', async () => {
    const response = await get(`/processes/${pid}/runs/1/files/square.png`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-disposition')).toBe('inline; filename=square.png');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const bytes = new Uint8Array(await response.arrayBuffer());
    expectPng(bytes);
    expect(Buffer.from(bytes).toString('base64')).toBe(result.outputs[0].data);
    const csv = await get(`/processes/${pid}/runs/1/files/report.csv`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(await csv.text()).toBe('a,b\n1,2\n');
  });

  it('serves SVG and HTML as attachments, never as a page of the server', async () => {
    for (const [name, type] of [
      ['evil.svg', 'image/svg+xml'],
      ['page.html', 'text/html'],
    ]) {
      const response = await get(`/processes/${pid}/runs/1/files/${name}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename=${name}`);
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it("answers 404 to another principal, whatever the name, as for the process's other routes", async () => {
    for (const path of [
      `/processes/${pid}/runs/1/files/square.png`,
      `/processes/${pid}/runs/1/files/..`,
      `/processes/${pid}`,
    ]) {
      const response = await get(path, 'mallory-token');
      expect(response.status).toBe(404);
      expect(((await response.json()) as Json).code).toBe('NOT_FOUND');
    }
  });

  it('answers 400 to a name no file can have and 404 to a file or run that does not exist', async () => {
    const bad = await get(`/processes/${pid}/runs/1/files/${encodeURIComponent('../mci.db')}`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION', path: 'name' });
    expect((await get(`/processes/${pid}/runs/1/files/missing.png`)).status).toBe(404);
    expect((await get(`/processes/${pid}/runs/2/files/square.png`)).status).toBe(404);
    expect((await get(`/processes/${pid + 1000}/runs/1/files/square.png`)).status).toBe(404);
  });
});

describe('hostile programs', () => {
  it('a path-traversal name, a bad media type and an oversized picture fail with clear errors', async () => {
    const traversal = await runBlocking(`output.file('../../etc/passwd', 'x');`);
    expect(traversal.status).toBe('failed');
    expect(traversal.error.message).toBe('output.file(): the name "../../etc/passwd" contains ".."');
    const mime = await runBlocking(`output.image(new Uint8Array(4), 'text/html');`);
    expect(mime.error.message).toContain('output.image(): the mimeType must be an image media type');
    const big = await runBlocking(`output.image(new Uint8Array(2 * 1024 * 1024), 'image/png');`);
    expect(big.status).toBe('failed');
    expect(big.error.message).toMatch(/^output\.image\(\): \d+ bytes do not fit in this run's output limit/);
    expect(big.outputs).toEqual([]);
  });
});

describe('run_code over MCP', () => {
  it('returns image and resource_link items next to the text, for a drawn PNG and a tool picture', async () => {
    const client = await httpClient(server.url, 'alice-token');
    try {
      const drawn = (await client.callTool({
        name: 'run_code',
        arguments: { code: DRAW_PNG_PROGRAM },
      })) as CallToolResult;
      expect(drawn.isError).toBe(false);
      expect(drawn.content.map((item) => item.type)).toEqual(['text', 'image', 'resource_link']);
      const image = drawn.content[1] as { data: string; mimeType: string };
      expect(image.mimeType).toBe('image/png');
      expectPng(Buffer.from(image.data, 'base64'));
      const { pid } = drawn.structuredContent as { pid: number };
      expect(drawn.content[2]).toEqual({
        type: 'resource_link',
        uri: `/processes/${pid}/runs/1/files/square.png`,
        name: 'square.png',
        mimeType: 'image/png',
      });
      // The text says what the picture is, not its base64.
      const text = (drawn.content[0] as { text: string }).text;
      expect(text).not.toContain(image.data);
      expect(text).toContain(
        'output: {"type":"image","mimeType":"image/png","data":"[image/png, 120 bytes]"}',
      );
      expect(text).not.toContain('warning');

      const fromTool = (await client.callTool({
        name: 'run_code',
        arguments: { code: `output(await tools.pixel({}));` },
      })) as CallToolResult;
      expect(fromTool.content.slice(1)).toEqual([
        { type: 'image', mimeType: 'image/png', data: PIXEL.toString('base64') },
      ]);
    } finally {
      await client.close();
    }
  });
});
