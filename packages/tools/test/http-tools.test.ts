import { describe, expect, it } from 'vitest';
import { sendJson, startHttpServer } from './helpers/http-test-server.ts';
import { runnerFor } from './helpers/tool-dir.ts';

// A 1x1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

const echo = (
  req: { method: string; url: string; headers: Record<string, unknown>; body: string },
  res: import('node:http').ServerResponse,
) => sendJson(res, 200, { method: req.method, url: req.url, headers: req.headers, body: req.body });

describe('http tools', () => {
  it('sends each method with templated url, encoded params and headers', async () => {
    await using server = await startHttpServer({ '/items/42': echo });
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
    await using t = await runnerFor({
      tools: methods.map((method) => ({
        name: `call-${method}`,
        execution: {
          type: 'http',
          method,
          url: `${server.url}/items/{{props.id}}`,
          params: { q: '{{props.q}}', limit: '{!!props.limit!!}', tags: ['a', 'b c'] },
          headers: { 'X-Trace': 'trace-{{props.id}}' },
        },
      })),
    });
    for (const method of methods) {
      const result = await t.runner.execute(`call-${method}`, { id: 42, q: 'a b&c=d/é', limit: 5 });
      expect(result.isError, result.error).toBe(false);
      const seen = server.requests.at(-1)!;
      expect(seen.method).toBe(method);
      const query = new URL(seen.url, server.url).searchParams;
      expect(query.get('q')).toBe('a b&c=d/é');
      expect(query.get('limit')).toBe('5');
      expect(query.getAll('tags')).toEqual(['a', 'b c']);
      expect(seen.url).not.toContain(' ');
      expect(seen.headers['x-trace']).toBe('trace-42');
    }
    const head = await runnerFor({
      tools: [{ name: 'head', execution: { type: 'http', method: 'HEAD', url: `${server.url}/items/42` } }],
    });
    await using _head = head;
    const result = await head.runner.execute('head');
    expect(result.isError).toBe(false);
    expect(server.requests.at(-1)!.method).toBe('HEAD');
  });

  it('sends json, form and raw bodies with their content types unless given', async () => {
    await using server = await startHttpServer({ '/echo': echo });
    await using t = await runnerFor({
      tools: [
        {
          name: 'json',
          execution: {
            type: 'http',
            method: 'POST',
            url: `${server.url}/echo`,
            body: {
              type: 'json',
              content: {
                name: '{{props.name}}',
                count: '{!!props.count!!}',
                nested: { list: '{!!props.list!!}' },
              },
            },
          },
        },
        {
          name: 'form',
          execution: {
            type: 'http',
            method: 'POST',
            url: `${server.url}/echo`,
            body: { type: 'form', content: { name: '{{props.name}}', note: 'a&b=c' } },
          },
        },
        {
          name: 'raw',
          execution: {
            type: 'http',
            method: 'PUT',
            url: `${server.url}/echo`,
            body: { type: 'raw', content: 'Hello {{props.name}}' },
          },
        },
        {
          name: 'raw-xml',
          execution: {
            type: 'http',
            method: 'POST',
            url: `${server.url}/echo`,
            headers: { 'Content-Type': 'application/xml' },
            body: { type: 'raw', content: '<name>{{props.name}}</name>' },
          },
        },
      ],
    });
    const props = { name: 'Zoë', count: 3, list: [1, 'two', null] };

    await t.runner.execute('json', props);
    let seen = server.requests.at(-1)!;
    expect(seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen.body)).toEqual({ name: 'Zoë', count: 3, nested: { list: [1, 'two', null] } });

    await t.runner.execute('form', props);
    seen = server.requests.at(-1)!;
    expect(seen.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(seen.body))).toEqual({ name: 'Zoë', note: 'a&b=c' });

    await t.runner.execute('raw', props);
    seen = server.requests.at(-1)!;
    expect(seen.method).toBe('PUT');
    expect(seen.headers['content-type']).toBe('text/plain');
    expect(seen.body).toBe('Hello Zoë');

    await t.runner.execute('raw-xml', props);
    seen = server.requests.at(-1)!;
    expect(seen.headers['content-type']).toBe('application/xml');
    expect(seen.body).toBe('<name>Zoë</name>');
  });

  it('applies api key (header and query), bearer and basic auth', async () => {
    await using server = await startHttpServer({ '/secure': echo });
    const url = `${server.url}/secure`;
    await using t = await runnerFor(
      {
        tools: [
          {
            name: 'key-header',
            execution: {
              type: 'http',
              url,
              auth: { type: 'apiKey', in: 'header', name: 'X-API-Key', value: '{{env.TEST_KEY}}' },
            },
          },
          {
            name: 'key-query',
            execution: {
              type: 'http',
              url,
              params: { a: '1' },
              auth: { type: 'apiKey', in: 'query', name: 'api_key', value: '{{env.TEST_KEY}}' },
            },
          },
          {
            name: 'bearer',
            execution: { type: 'http', url, auth: { type: 'bearer', token: 'tok-{{props.user}}' } },
          },
          {
            name: 'basic',
            execution: {
              type: 'http',
              url,
              auth: { type: 'basic', username: '{{props.user}}', password: 'p:ss wörd' },
            },
          },
        ],
      },
      { env: { TEST_KEY: 'k e/y' } },
    );
    await t.runner.execute('key-header');
    expect(server.requests.at(-1)!.headers['x-api-key']).toBe('k e/y');
    await t.runner.execute('key-query');
    const query = new URL(server.requests.at(-1)!.url, server.url).searchParams;
    expect(query.get('api_key')).toBe('k e/y');
    expect(query.get('a')).toBe('1');
    await t.runner.execute('bearer', { user: 'ann' });
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer tok-ann');
    await t.runner.execute('basic', { user: 'ann' });
    expect(server.requests.at(-1)!.headers.authorization).toBe(
      `Basic ${Buffer.from('ann:p:ss wörd').toString('base64')}`,
    );
  });

  it('fetches OAuth2 client-credentials tokens once, shares them, renews before expiry and after a 401', async () => {
    let issued = 0;
    const valid = new Set<string>();
    await using server = await startHttpServer({
      '/token': (req, res) => {
        const form = new URLSearchParams(req.body);
        if (form.get('grant_type') !== 'client_credentials' || form.get('client_secret') !== 'shh') {
          sendJson(res, 400, { error: 'invalid_client' });
          return;
        }
        issued++;
        const token = `token-${issued}-${form.get('client_id')}-${form.get('scope')}`;
        valid.add(token);
        // Answer a little late so concurrent callers overlap with the request in flight.
        setTimeout(
          () =>
            sendJson(res, 200, {
              access_token: token,
              token_type: 'Bearer',
              expires_in: Number(form.get('client_id') === 'short' ? 1 : 3600),
            }),
          50,
        );
      },
      '/api': (req, res) => {
        const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        if (!valid.has(token)) sendJson(res, 401, { error: 'invalid_token' });
        else sendJson(res, 200, { token });
      },
    });
    const oauth = (clientId: string) => ({
      type: 'oauth2',
      flow: 'clientCredentials',
      tokenUrl: `${server.url}/token`,
      clientId,
      clientSecret: 'shh',
      scopes: ['read', 'write'],
    });
    await using t = await runnerFor({
      tools: [
        { name: 'api', execution: { type: 'http', url: `${server.url}/api`, auth: oauth('app') } },
        { name: 'short', execution: { type: 'http', url: `${server.url}/api`, auth: oauth('short') } },
      ],
    });

    const results = await Promise.all(Array.from({ length: 8 }, () => t.runner.execute('api')));
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(server.count('/token')).toBe(1);
    expect(server.requests.find((r) => r.url === '/token')!.body).toContain('scope=read+write');
    expect(results[0]!.structuredContent).toEqual({ token: 'token-1-app-read write' });

    await t.runner.execute('api');
    expect(server.count('/token')).toBe(1);

    // The server revokes the token: one 401, a new token, the call succeeds.
    valid.clear();
    const afterRevoke = await t.runner.execute('api');
    expect(afterRevoke.isError, afterRevoke.error).toBe(false);
    expect(server.count('/token')).toBe(2);

    // A token that lives 1 s is renewed shortly before it runs out.
    await t.runner.execute('short');
    expect(server.count('/token')).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t.runner.execute('short');
    expect(server.count('/token')).toBe(4);
  });

  it('reports a failing token endpoint as an error result', async () => {
    await using server = await startHttpServer({
      '/token': (_req, res) => sendJson(res, 400, { error: 'invalid_client' }),
    });
    await using t = await runnerFor({
      tools: [
        {
          name: 'api',
          execution: {
            type: 'http',
            url: `${server.url}/api`,
            auth: {
              type: 'oauth2',
              flow: 'clientCredentials',
              tokenUrl: `${server.url}/token`,
              clientId: 'x',
              clientSecret: 'y',
            },
          },
        },
      ],
    });
    const result = await t.runner.execute('api');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/OAuth2 token request to .*\/token failed with HTTP 400/);
    expect(server.count('/api')).toBe(0);
  });

  it('retries 503 until 200, does not retry 404, and honours Retry-After', async () => {
    let calls = 0;
    const times: number[] = [];
    await using server = await startHttpServer({
      '/flaky': (_req, res) => {
        calls++;
        if (calls < 3) res.writeHead(503).end('busy');
        else sendJson(res, 200, { ok: true, calls });
      },
      '/later': (_req, res) => {
        times.push(performance.now());
        if (times.length === 1) res.writeHead(429, { 'retry-after': '1' }).end('slow down');
        else res.writeHead(200).end('done');
      },
    });
    const retries = { attempts: 3, backoff_ms: 20 };
    await using t = await runnerFor({
      tools: [
        {
          name: 'flaky',
          execution: {
            type: 'http',
            method: 'POST',
            url: `${server.url}/flaky`,
            body: { type: 'json', content: { a: 1 } },
            retries,
          },
        },
        { name: 'missing', execution: { type: 'http', url: `${server.url}/missing`, retries } },
        {
          name: 'later',
          execution: { type: 'http', url: `${server.url}/later`, retries: { attempts: 2, backoff_ms: 0 } },
        },
        { name: 'no-retry', execution: { type: 'http', url: `${server.url}/flaky` } },
      ],
    });

    const flaky = await t.runner.execute('flaky');
    expect(flaky.isError, flaky.error).toBe(false);
    expect(flaky.structuredContent).toEqual({ ok: true, calls: 3 });
    expect(server.requests.filter((r) => r.url === '/flaky').every((r) => r.body === '{"a":1}')).toBe(true);

    const missing = await t.runner.execute('missing');
    expect(missing.isError).toBe(true);
    expect(missing.error).toBe('HTTP 404 Not Found: no route for /missing');
    expect(missing.metadata?.status_code).toBe(404);
    expect(server.count('/missing')).toBe(1);

    const later = await t.runner.execute('later');
    expect(later.isError).toBe(false);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);

    calls = 0;
    const once = await t.runner.execute('no-retry');
    expect(once.isError).toBe(true);
    expect(once.error).toBe('HTTP 503 Service Unavailable: busy');
    expect(calls).toBe(1);
  });

  it('gives up after the last attempt and retries dropped connections', async () => {
    let drops = 0;
    await using server = await startHttpServer({
      '/down': (_req, res) => res.writeHead(500).end('x'.repeat(2000)),
      '/drop': (_req, res) => {
        drops++;
        if (drops === 1) res.socket?.destroy();
        else res.writeHead(200).end('back');
      },
    });
    await using t = await runnerFor({
      tools: [
        {
          name: 'down',
          execution: { type: 'http', url: `${server.url}/down`, retries: { attempts: 3, backoff_ms: 10 } },
        },
        {
          name: 'drop',
          execution: { type: 'http', url: `${server.url}/drop`, retries: { attempts: 2, backoff_ms: 10 } },
        },
      ],
    });
    const down = await t.runner.execute('down');
    expect(down.isError).toBe(true);
    expect(server.count('/down')).toBe(3);
    expect(down.error).toMatch(/^HTTP 500 Internal Server Error: x{500}$/);

    const drop = await t.runner.execute('drop');
    expect(drop.isError, drop.error).toBe(false);
    expect(drop.content).toEqual([{ type: 'text', text: 'back' }]);
    expect(drops).toBe(2);
  });

  it('bounds the whole request with timeout_ms', async () => {
    await using server = await startHttpServer({
      '/slow': (_req, res) => {
        setTimeout(() => res.end('late'), 5000).unref();
      },
    });
    await using t = await runnerFor({
      tools: [
        {
          name: 'slow',
          execution: {
            type: 'http',
            url: `${server.url}/slow`,
            timeout_ms: 200,
            retries: { attempts: 3, backoff_ms: 10 },
          },
        },
      ],
    });
    const started = performance.now();
    const result = await t.runner.execute('slow');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/timed out after 200 ms/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('maps JSON to structuredContent, images to image content, and fills metadata', async () => {
    await using server = await startHttpServer({
      '/json': (_req, res) => sendJson(res, 200, { temp: 21.5, tags: ['a'] }, { 'X-Custom': 'yes' }),
      '/problem': (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/problem+json; charset=utf-8' })
          .end('{"title":"ok"}'),
      '/image': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG),
      '/audio': (_req, res) =>
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.from([1, 2, 3])),
      '/text': (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('plain ✓'),
    });
    const tool = (name: string) => ({ name, execution: { type: 'http', url: `${server.url}/${name}` } });
    await using t = await runnerFor({ tools: ['json', 'problem', 'image', 'audio', 'text'].map(tool) });

    const json = await t.runner.execute('json');
    expect(json).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: '{"temp":21.5,"tags":["a"]}' }],
      structuredContent: { temp: 21.5, tags: ['a'] },
      metadata: { status_code: 200, headers: { 'x-custom': 'yes', 'content-type': 'application/json' } },
    });
    expect(json.metadata?.response_time_ms).toEqual(expect.any(Number));
    expect((await t.runner.execute('problem')).structuredContent).toEqual({ title: 'ok' });
    expect((await t.runner.execute('image')).content).toEqual([
      { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' },
    ]);
    expect((await t.runner.execute('audio')).content).toEqual([
      { type: 'audio', data: 'AQID', mimeType: 'audio/wav' },
    ]);
    const text = await t.runner.execute('text');
    expect(text.content).toEqual([{ type: 'text', text: 'plain ✓' }]);
    expect(text.structuredContent).toBeUndefined();
  });

  it('refuses response bodies larger than maxOutputBytes, declared or streamed', async () => {
    await using server = await startHttpServer({
      '/declared': (_req, res) => res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)),
      '/streamed': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 10; i++) res.write('y'.repeat(500));
        res.end();
      },
      '/small': (_req, res) => res.end('z'.repeat(1000)),
    });
    const tool = (name: string) => ({ name, execution: { type: 'http', url: `${server.url}/${name}` } });
    await using t = await runnerFor(
      { tools: ['declared', 'streamed', 'small'].map(tool) },
      { maxOutputBytes: 1000 },
    );
    for (const name of ['declared', 'streamed']) {
      const result = await t.runner.execute(name);
      expect(result.isError, name).toBe(true);
      expect(result.error).toBe(`Response body of ${server.url}/${name} is larger than the 1000-byte limit`);
    }
    expect((await t.runner.execute('small')).content).toEqual([{ type: 'text', text: 'z'.repeat(1000) }]);
  });

  it('aborts an in-flight request promptly when canceled', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    await using server = await startHttpServer({
      '/hang': (_req, res) => {
        res.on('close', closed);
      },
    });
    await using t = await runnerFor({
      tools: [{ name: 'hang', execution: { type: 'http', url: `${server.url}/hang` } }],
    });
    const controller = new AbortController();
    const pending = t.runner.execute('hang', {}, { signal: controller.signal });
    while (server.count('/hang') === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const started = performance.now();
    controller.abort();
    const result = await pending;
    // Generous for a loaded CI machine; without the abort it would hang for the 30 s default timeout.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({
      isError: true,
      error: 'Execution canceled',
      metadata: { canceled: true },
    });
    await connectionClosed;
  });

  it('reports connection failures and bad URLs as error results', async () => {
    await using server = await startHttpServer({});
    const port = new URL(server.url).port;
    await server[Symbol.asyncDispose]();
    await using t = await runnerFor({
      tools: [
        { name: 'refused', execution: { type: 'http', url: `http://127.0.0.1:${port}/x` } },
        { name: 'bad-url', execution: { type: 'http', url: '{{props.base}}/x' } },
        { name: 'missing-prop', execution: { type: 'http', url: 'http://127.0.0.1/{{props.nope}}' } },
      ],
    });
    const refused = await t.runner.execute('refused');
    expect(refused.isError).toBe(true);
    expect(refused.error).toMatch(/ECONNREFUSED/);
    const badUrl = await t.runner.execute('bad-url', { base: 'not a url' });
    expect(badUrl.error).toMatch(/Invalid request: .*not a url\/x/);
    const missing = await t.runner.execute('missing-prop');
    expect(missing.error).toMatch(/^execution\.url: .*props\.nope/);
  });
});
