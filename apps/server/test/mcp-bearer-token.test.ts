import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { examplePath } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/server.ts';
import { httpClient, postInitialize } from './support/mcp-fixture.ts';

// An MCP client without the server's token learns that it needs a bearer token, and is not sent into
// an OAuth flow: the server advertises no OAuth metadata.

const TOKEN = 'mcp-bearer-7c1e4b90';
let server: MciServer;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    file: examplePath('mci.yaml'),
    logLevel: 'silent',
    tokens: [{ token: TOKEN, role: 'client', id: 'agent' }],
  });
});
afterAll(async () => {
  await server?.close({ graceMs: 0 });
});

const postMcp = (headers: Record<string, string> = {}) => postInitialize(server.url, '2025-06-18', headers);

/** An OAuth client provider as MCP clients with OAuth support (the MCP Inspector) bring one. */
function oauthProvider(redirects: URL[]): OAuthClientProvider {
  return {
    redirectUrl: 'http://127.0.0.1:9/callback',
    clientMetadata: { redirect_uris: ['http://127.0.0.1:9/callback'], client_name: 'test' },
    clientInformation: () => undefined,
    saveClientInformation: () => {},
    tokens: () => undefined,
    saveTokens: () => {},
    redirectToAuthorization: (url) => {
      redirects.push(url);
    },
    saveCodeVerifier: () => {},
    codeVerifier: () => 'verifier',
  };
}

describe('/mcp with tokens', () => {
  it('answers a request without a token 401 with a bearer challenge and says what to send', async () => {
    const response = await postMcp();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="mci"');
    const body = (await response.json()) as { code: string; error: string };
    expect(body.code).toBe('UNAUTHORIZED');
    expect(body.error).toContain('"Authorization: Bearer <token>"');
    expect(body.error).toContain('does not use OAuth');
  });

  it('answers a wrong token 401 with error="invalid_token", and no resource metadata', async () => {
    const response = await postMcp({ Authorization: 'Bearer not-the-token' });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate');
    expect(challenge).toBe('Bearer realm="mci", error="invalid_token", error_description="invalid token"');
    expect(challenge).not.toContain('resource_metadata');
  });

  it('publishes no OAuth metadata: the discovery paths answer 404 without a token', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(((await response.json()) as { error: string }).error).toContain('Authorization: Bearer');
    }
  });

  it('the MCP SDK client without a token fails with the message, not an OAuth error', async () => {
    const error = await httpClient(server.url).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 401 });
    expect((error as Error).message).toContain('a bearer token is required');
    expect((error as Error).message).toContain('this server does not use OAuth');
  });

  it('the MCP SDK client with an OAuth provider finds no OAuth server and never redirects', async () => {
    const redirects: URL[] = [];
    const requests: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
      authProvider: oauthProvider(redirects),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        requests.push(`${new URL(String(input)).pathname} ${response.status}`);
        return response;
      },
    });
    const client = new Client({ name: 'oauth-client', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(redirects).toEqual([]);
    const discovery = requests.filter((line) => line.startsWith('/.well-known/'));
    expect(discovery.length).toBeGreaterThan(0);
    expect(discovery.every((line) => line.endsWith(' 404'))).toBe(true);
  });

  it("the MCP SDK client with the token header (the MCP Inspector's --header form) lists the tools", async () => {
    const client = await httpClient(server.url, TOKEN);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('run_code');
    } finally {
      await client.close();
    }
  });
});
