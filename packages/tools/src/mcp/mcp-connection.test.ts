import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startMcpHttpServer } from '../../test/helpers/mcp-http-server.ts';
import { McpConnection } from './mcp-connection.ts';

describe('McpConnection', () => {
  it('leaves no abort listener per call on a long-lived signal (the SDK never removes its own)', async () => {
    await using server = await startMcpHttpServer();
    const connection = new McpConnection('remote', { type: 'http', url: server.url });
    try {
      const lifetime = new AbortController();
      for (let i = 0; i < 20; i++) await connection.callTool('add', { a: i, b: 1 }, lifetime.signal);
      // Each would otherwise hold a finished request's cancel(), fired when the signal finally aborts.
      // One shared listener forwards the abort to the calls still running.
      expect(getEventListeners(lifetime.signal, 'abort').length).toBeLessThanOrEqual(1);
      // Aborting it later cancels none of the finished calls (the server would hear of each).
      lifetime.abort();
      expect(await connection.callTool('add', { a: 2, b: 2 })).toMatchObject({ content: [{ text: '4' }] });
      expect(server.methods.filter((m) => m === 'notifications/cancelled')).toEqual([]);
    } finally {
      await connection.close();
    }
  });
});
