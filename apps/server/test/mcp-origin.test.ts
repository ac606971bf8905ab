import { describe, expect, it } from 'vitest';
import { mcpSuiteServer, postInitialize } from './support/mcp-fixture.ts';

// /mcp is behind the server's Host/Origin guard, as the MCP spec requires of local servers (a web page
// must not drive it), and its CORS answers let an allowed page use the Mcp-* headers.
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning

const suite = mcpSuiteServer({ concurrency: 1 });

const post = (headers: Record<string, string>) => postInitialize(suite.server.url, '2025-11-25', headers);

describe('/mcp and browsers', () => {
  it('refuses a request from a foreign Origin (403) and answers the server’s own', async () => {
    expect((await post({ Origin: 'http://evil.example' })).status).toBe(403);
    const own = await post({ Origin: suite.server.url });
    expect(own.status).toBe(200);
    expect(own.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(own.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/i);
  });

  it('allows the Mcp-* headers in a preflight from an allowed origin', async () => {
    const preflight = await fetch(`${suite.server.url}/mcp`, {
      method: 'OPTIONS',
      headers: {
        Origin: suite.server.url,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'mcp-session-id, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Session-Id/i);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Protocol-Version/i);
  });
});
