import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startMcpHttpServer } from '../../test/helpers/mcp-http-server.ts';
import { McpConnection } from './mcp-connection.ts';

describe('McpConnection', () => {
  it('leaves no abort listeners on a long-lived signal (the SDK never removes its own)', async () => {
    await using server = await startMcpHttpServer();
    const connection = new McpConnection('remote', { type: 'http', url: server.url });
    try {
      const lifetime = new AbortController();
      for (let i = 0; i < 20; i++) await connection.callTool('add', { a: i, b: 1 }, lifetime.signal);
      // Each would otherwise hold a finished request's cancel(), fired when the signal finally aborts.
      expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    } finally {
      await connection.close();
    }
  });
});
