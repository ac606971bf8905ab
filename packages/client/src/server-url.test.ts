import { expect, test } from 'vitest';
import { backoffDelay, reconnectPolicy } from './backoff.ts';
import { resolveServerUrls } from './server-url.ts';

test.each([
  ['http://127.0.0.1:7687', 'ws://127.0.0.1:7687/ws', 'http://127.0.0.1:7687'],
  ['ws://127.0.0.1:7687/ws', 'ws://127.0.0.1:7687/ws', 'http://127.0.0.1:7687'],
  ['ws://127.0.0.1:7687/', 'ws://127.0.0.1:7687/ws', 'http://127.0.0.1:7687'],
  ['localhost:7687', 'ws://localhost:7687/ws', 'http://localhost:7687'],
  ['https://example.com/mci/ws', 'wss://example.com/mci/ws', 'https://example.com/mci'],
  ['wss://example.com', 'wss://example.com/ws', 'https://example.com'],
])('resolveServerUrls(%s)', (url, ws, http) => {
  expect(resolveServerUrls(url)).toEqual({ ws, http });
});

test('bad URLs are CONNECT_FAILED errors naming the URL', () => {
  expect(() => resolveServerUrls('ftp://example.com')).toThrow(/unsupported URL scheme ftp:/);
  expect(() => resolveServerUrls('http://')).toThrow(/not a server URL/);
});

test('backoff grows by the factor, is capped, and keeps at least half of each step', () => {
  const policy = reconnectPolicy({ initialDelayMs: 100, maxDelayMs: 1000, factor: 2 });
  if (!policy) throw new Error('a policy');
  expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(policy, attempt, () => 1))).toEqual([
    100, 200, 400, 800, 1000,
  ]);
  expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(policy, attempt, () => 0))).toEqual([
    50, 100, 200, 400, 500,
  ]);
  expect(reconnectPolicy(false)).toBeUndefined();
  expect(reconnectPolicy(true)?.maxAttempts).toBe(Number.POSITIVE_INFINITY);
});
