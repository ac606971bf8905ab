import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteToolFileDir } from './support/greet-tools.ts';
import { listenLocal, postProcess, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { httpClient } from './support/mcp-fixture.ts';
import { serveProcesses } from './support/serve-process.ts';

// Secret values never leave in what the server stores or sends: a whole `mci serve` with tools that
// read a key, a service that echoes it back, a program that prints a secret it knows in every form,
// checked in the HTTP answers, the WebSocket events, the stored records, MCP and the server's log.

const API_KEY = 'sk-live-0123456789abcdefghijKLMNOP';
const DB_PASSWORD = 'correct-horse-battery-staple-42';
const TOKEN = 'operator-token-7f3a9c2e5b8d1f4a6c0e';
const { dir } = suiteToolFileDir(
  'mci-redaction-',
  `schemaVersion: '1.0'
tools:
  - name: echo_key
    description: Calls the service with the key.
    execution:
      type: http
      method: GET
      url: '{{env.SERVICE_URL}}/echo'
      headers: { Authorization: 'Bearer {{env.API_KEY}}' }
  - name: key_tail
    execution:
      type: cli
      command: ${JSON.stringify(process.execPath)}
      args: ['-e', 'console.log(process.argv[1].slice(3))', '{{env.API_KEY}}']
  - name: greet
    execution: { type: text, text: 'hello' }
`,
);
let service: Server;
let serviceUrl = '';

/** Whether `text` holds a secret, or a run of 12 of its characters. */
function leaks(text: string): string | undefined {
  for (const secret of [API_KEY, DB_PASSWORD, TOKEN])
    for (let i = 0; i + 12 <= secret.length; i++)
      if (text.includes(secret.slice(i, i + 12))) return secret.slice(i, i + 12);
  return undefined;
}

beforeAll(async () => {
  service = createServer((req, res) => res.end(`you sent ${req.headers.authorization}`));
  serviceUrl = await listenLocal(service);
  writeFileSync(
    join(dir, 'config.yaml'),
    `file: tools.yaml
secrets: [DB_PASSWORD]
publicEnv: [SERVICE_URL]
tokens: [{ token: ${TOKEN}, role: operator, id: ops }]
`,
  );
});
afterAll(() => {
  service?.close();
});

const { serve } = serveProcesses(dir);
const env = { API_KEY, DB_PASSWORD, SERVICE_URL: 'http://127.0.0.1:1', MCI_LOG_LEVEL: 'debug' };

describe('redaction of secret values', () => {
  it('takes every secret out of outputs, logs, errors, events, stored records, MCP and the server log', {
    timeout: 60_000,
  }, async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'r.db')], {
      ...env,
      SERVICE_URL: serviceUrl,
    });
    const url = await server.url;
    const ws = await openJsonSocket(url.replace('http', 'ws') + '/ws', TOKEN);
    await ws.request({ type: 'subscribe', all: true });
    // The program knows DB_PASSWORD and the token (pasted into its prompt), and gets the key from tools.
    const code = `
      output((await tools.echo_key()).content[0].text);
      output((await tools.key_tail()).content[0].text.trim());
      const pw = ${JSON.stringify(DB_PASSWORD)};
      console.log(pw.slice(0, 15)); console.log(pw.slice(15));
      console.error('token', ${JSON.stringify(TOKEN)});
      const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const base64 = (s) => {
        let out = '';
        for (let i = 0; i < s.length; i += 3) {
          const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0);
          out += digits[(n >> 18) & 63] + digits[(n >> 12) & 63];
          out += (i + 1 < s.length ? digits[(n >> 6) & 63] : '=') + (i + 2 < s.length ? digits[n & 63] : '=');
        }
        return out;
      };
      output(base64('user:' + pw));
      output(JSON.stringify({ pw }));
      output({ [pw]: [pw.toUpperCase(), pw] });
      throw new Error('failed with ' + pw);`;
    const done = await postProcess(url, { code, block: true }, TOKEN);
    expect(done.body).toMatchObject({ status: 'failed' });
    expect(done.body.outputs).toEqual([
      'you sent Bearer [redacted:API_KEY]',
      '[redacted:API_KEY]',
      expect.stringContaining('[redacted:DB_PASSWORD]'),
      JSON.stringify({ pw: '[redacted:DB_PASSWORD]' }),
      { '[redacted:DB_PASSWORD]': [DB_PASSWORD.toUpperCase(), '[redacted:DB_PASSWORD]'] },
    ]);
    expect(done.body.stdout).toBe('[redacted:DB_PASSWORD]\n[redacted:DB_PASSWORD]\n');
    expect(done.body.stderr).toContain('token [redacted:token:ops]');
    expect(done.body.error.message).toBe('failed with [redacted:DB_PASSWORD]');

    const { pid } = done.body;
    const stored = [
      await request(url, 'GET', `/processes/${pid}`, undefined, TOKEN),
      await request(url, 'GET', `/processes/${pid}/runs/1`, undefined, TOKEN),
      await request(url, 'GET', `/processes/${pid}/events`, undefined, TOKEN),
    ];
    for (const answer of stored) expect(leaks(JSON.stringify(answer.body))).toBeUndefined();
    await ws.waitFor((m) => m.type === 'process' && m.pid === pid && m.state === 'idle');
    const events = ws.messages.filter((m) => m.pid === pid);
    expect(events.some((m) => m.type === 'log')).toBe(true);
    expect(leaks(JSON.stringify(events))).toBeUndefined();

    // Which secrets each tool uses, never their values: GET /tools, /tools.d.ts, MCP.
    const tools = await request(url, 'GET', '/tools', undefined, TOKEN);
    const byName = Object.fromEntries(tools.body.tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.echo_key.secrets).toEqual([{ name: 'API_KEY', set: true }]);
    expect(byName.key_tail.secrets).toEqual([{ name: 'API_KEY', set: true }]);
    expect(byName.greet.secrets).toBeUndefined();
    const dts = await fetch(`${url}/tools.d.ts`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(await dts.text()).toContain('Uses the secrets API_KEY, added by the host');
    const mcp = await httpClient(url, TOKEN);
    const listed = await mcp.listTools();
    expect(listed.tools.find((t) => t.name === 'echo_key')?._meta?.['mci/secrets']).toEqual([
      { name: 'API_KEY', set: true },
    ]);
    const called = await mcp.callTool({ name: 'echo_key', arguments: {} });
    expect(JSON.stringify(called)).toContain('[redacted:API_KEY]');
    expect(leaks(JSON.stringify(called))).toBeUndefined();
    await mcp.close();
    // A text file the program makes is redacted too, before it is stored.
    const filed = await postProcess(
      url,
      { code: `output.file('pw.txt', 'pw=' + ${JSON.stringify(DB_PASSWORD)});`, block: true },
      TOKEN,
    );
    const file = await fetch(`${url}/processes/${filed.body.pid}/runs/1/files/pw.txt`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(await file.text()).toBe('pw=[redacted:DB_PASSWORD]');
    // What a client sends is its own (a ref names its process), but the log line of it is redacted.
    const named = await postProcess(
      url,
      { code: 'output(1)', ref: `job-${DB_PASSWORD}`, block: true },
      TOKEN,
    );
    expect(named.body).toMatchObject({ status: 'success', ref: `job-${DB_PASSWORD}` });

    server.child.kill('SIGTERM');
    await server.exited;
    expect(server.stdout()).toContain('[redacted:');
    expect(leaks(server.stdout() + server.stderr())).toBeUndefined();
  });

  it('refuses to start when a secret is shorter than 8 characters, and says how to mark a variable public', {
    timeout: 30_000,
  }, async () => {
    const short = serve(['--config', 'config.yaml', '--db', join(dir, 's.db')], {
      ...env,
      API_KEY: 'abc123',
    });
    expect(await short.exited).toBe(2);
    expect(short.stderr()).toContain(
      'tools.echo_key.execution.headers.Authorization reads {{env.API_KEY}}: the value of API_KEY has 6 characters; a secret needs at least 8',
    );
    expect(short.stderr()).toContain('list API_KEY under publicEnv');
    const marked = serve(['--config', 'config.yaml', '--db', join(dir, 't.db')], {
      ...env,
      API_KEY: 'abc123',
      MCI_PUBLIC_ENV: 'API_KEY',
    });
    await marked.url;
    marked.child.kill('SIGTERM');
    expect(await marked.exited).toBe(0);
  });
});
