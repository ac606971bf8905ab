import { describe, expect, it } from 'vitest';
import { echo, sendJson, startHttpServer } from './helpers/http-test-server.ts';
import { runnerFor, runnerForTool } from './helpers/tool-dir.ts';

describe('http tools: auth', () => {
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
    await using t = await runnerForTool({
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
    });
    const result = await t.runner.execute('api');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/OAuth2 token request to .*\/token failed with HTTP 400/);
    expect(server.count('/api')).toBe(0);
  });
});
