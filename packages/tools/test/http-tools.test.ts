import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { echo, sendJson, startHttpServer } from './helpers/http-test-server.ts';
import { runnerFor, runnerForTool } from './helpers/tool-dir.ts';
import { expectCanceled } from './helpers/results.ts';

// A 1x1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

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
    const head = await runnerForTool({
      name: 'head',
      execution: { type: 'http', method: 'HEAD', url: `${server.url}/items/42` },
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

  it('decodes text bodies as TextDecoder does (BOM dropped, bad bytes replaced, charset), declared or chunked', async () => {
    const utf8 = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"name":"Zoë"}'),
      Buffer.from([0xff]),
    ]);
    const latin1 = Buffer.from('Zoë', 'latin1');
    const send = (type: string, body: Buffer, chunked: boolean) => (_req: unknown, res: ServerResponse) => {
      res.writeHead(
        200,
        chunked ? { 'content-type': type } : { 'content-type': type, 'content-length': body.length },
      );
      res.end(body);
    };
    await using server = await startHttpServer({
      '/utf8': send('application/json', utf8, false),
      '/utf8-chunked': send('application/json', utf8, true),
      '/latin1': send('text/plain; charset=ISO-8859-1', latin1, false),
      '/latin1-chunked': send('text/plain; charset=ISO-8859-1', latin1, true),
    });
    const names = ['utf8', 'utf8-chunked', 'latin1', 'latin1-chunked'];
    await using t = await runnerFor({
      tools: names.map((name) => ({ name, execution: { type: 'http', url: `${server.url}/${name}` } })),
    });
    for (const name of names) {
      const result = await t.runner.execute(name);
      const expected = name.startsWith('utf8') ? new TextDecoder().decode(utf8) : 'Zoë';
      expect(result.content, name).toEqual([{ type: 'text', text: expected }]);
      expect(expected.startsWith('{"name"')).toBe(name.startsWith('utf8'));
    }
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

  it('reads the real response after informational (1xx) ones, and keeps the pool usable after a refused body', async () => {
    await using server = await startHttpServer({
      '/hints': (_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' }, () =>
          sendJson(res, 200, { ok: true }),
        );
      },
      '/big': (_req, res) => res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)),
    });
    const tool = (name: string) => ({ name, execution: { type: 'http', url: `${server.url}/${name}` } });
    await using t = await runnerFor({ tools: ['hints', 'big'].map(tool) }, { maxOutputBytes: 1000 });
    expect(await t.runner.execute('hints')).toMatchObject({
      isError: false,
      structuredContent: { ok: true },
      metadata: { status_code: 200 },
    });
    expect((await t.runner.execute('big')).isError).toBe(true);
    expect((await t.runner.execute('hints')).structuredContent).toEqual({ ok: true });
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
    controller.abort();
    // Without the abort it would hang for the 30 s default timeout, past the test's own.
    const result = await pending;
    expectCanceled(result);
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
