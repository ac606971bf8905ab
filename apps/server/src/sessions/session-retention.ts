import type { Logger } from 'pino';
import { DEFAULT_RETENTION_MAX_AGE_MS, type RetentionOptions, sweepEvery } from '../store/retention.ts';
import type { SessionStore } from './session-store.ts';

/**
 * Retention of sessions and state, every `intervalMs`: expired state entries go, so does the state of
 * processes that no longer exist, and sessions with no process left, idle longer than `maxAgeMs`.
 * None with `options: false`. The timer is unref'd.
 */
export function startSessionRetention(
  store: SessionStore,
  options: RetentionOptions | false | undefined,
  logger: Logger,
): { stop(): void } | undefined {
  if (options === false) return undefined;
  const maxAgeMs = options?.maxAgeMs ?? DEFAULT_RETENTION_MAX_AGE_MS;
  return sweepEvery(
    options?.intervalMs,
    async () => {
      const now = Date.now();
      const deleted = await store.sweep(now, now - maxAgeMs);
      if (deleted > 0) logger.debug({ deleted }, `retention deleted ${deleted} idle sessions`);
    },
    (error) => logger.error({ err: error }, 'session retention failed'),
  );
}
