import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal, request } from './support/http.ts';
import { serveProcesses } from './support/serve-process.ts';

// Credentials injected by the host and egress denied by default, through `mci serve` and a local
// service that records the headers it receives and echoes the key back.

const SECRET = 'sk-test-0123456789abcdefghij';
const dir = mkdtempSync(join(tmpdir(), 'mci-credentials-'));
const received: IncomingHttpHeaders[] = [];
let service: Server;
let serviceUrl = '';

beforeAll(async () => {
  service = createServer((req, res) => {
    received.push(req.headers);
    const { port } = service.address() as { port: number };
    if (req.url === '/redirect-away') {
      res.statusCode = 302;
      res.setHeader('location', `http://localhost:${port}/echo`);
      res.end();
      return;
    }
    res.setHeader('x-echo', String(req.headers.authorization));
    res.end(JSON.stringify({ auth: req.headers.authorization ?? null }));
  });
  serviceUrl = await listenLocal(service);
  writeFileSync(
    join(dir, 'tools.yaml'),
    "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'hi' }\n",
  );
  writeFileSync(
    join(dir, 'config.yaml'),
    `file: tools.yaml
allowNet: ['127.0.0.1']
credentials:
  - host: 127.0.0.1
    headers: { Authorization: 'Bearer {{env.SERVICE_TOKEN}}' }
`,
  );
});
afterAll(() => {
  service?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { serve } = serveProcesses(dir);

describe('credentials and egress', () => {
  it("adds the key on the host, replaces the program's own, redacts it coming back, refuses a redirect to a host not allowed", {
    timeout: 60_000,
  }, async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'c.db')], { SERVICE_TOKEN: SECRET });
    const url = await server.url;
    expect(server.stderr()).toContain(
      'Sandboxed fetch: 1 egress rule (allowNet and fetch policies); other hosts are refused',
    );
    const before = received.length;
    const code = `
      const a = await fetch('${serviceUrl}/echo');
      output(await a.text());
      output(a.headers.get('x-echo'));
      const b = await fetch('${serviceUrl}/echo', { headers: { Authorization: 'Bearer mine' } });
      output(await b.text());
      try { await fetch('${serviceUrl}/redirect-away'); } catch (e) { output(e.code); }
      try { await fetch('https://example.com/'); } catch (e) { output(e.code); }`;
    const done = await request(url, 'POST', '/processes', { code, block: true });
    expect(done.body).toMatchObject({ status: 'success' });
    const redacted = 'Bearer [redacted:SERVICE_TOKEN]';
    expect(done.body.outputs).toEqual([
      JSON.stringify({ auth: redacted }),
      redacted,
      JSON.stringify({ auth: redacted }),
      'EGRESS_DENIED',
      'EGRESS_DENIED',
    ]);
    // The service saw the key, also where the program sent its own; nothing reached localhost.
    expect(received.slice(before).map((headers) => headers.authorization)).toEqual([
      `Bearer ${SECRET}`,
      `Bearer ${SECRET}`,
      `Bearer ${SECRET}`,
    ]);
    const stored = await request(url, 'GET', `/processes/${done.body.pid}/runs/1`);
    expect(JSON.stringify(stored.body)).not.toContain(SECRET);
    server.child.kill('SIGTERM');
    await server.exited;
    expect(server.stdout() + server.stderr()).not.toContain(SECRET);
  });

  it("refuses to start when a credential's variable is unset or too short, naming the entry", {
    timeout: 30_000,
  }, async () => {
    const unset = serve(['--config', 'config.yaml', '--db', join(dir, 'd.db')], { SERVICE_TOKEN: '' });
    expect(await unset.exited).toBe(2);
    expect(unset.stderr()).toContain(
      'credentials[0].headers.Authorization: the environment variable SERVICE_TOKEN is not set',
    );
    const short = serve(['--config', 'config.yaml', '--db', join(dir, 'e.db')], { SERVICE_TOKEN: 'abc' });
    expect(await short.exited).toBe(2);
    expect(short.stderr()).toContain('SERVICE_TOKEN is shorter than 8 characters');
  });
});
