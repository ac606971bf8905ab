import { PageQuerySchema } from '@mci/protocol';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { HttpEnv } from '../http/http-env.ts';
import { readJson } from '../http/process-routes.ts';
import { requireJson } from '../http/request-guard.ts';
import { parseOrThrow } from '../http/validate.ts';
import type { Sessions } from './sessions.ts';

const SessionListQuerySchema = PageQuerySchema.strict();

const StatePutBodySchema = z.strictObject({
  /** The value in the output encoding (docs/protocol.md, "Output values"). */
  value: z.unknown().refine((value) => value !== undefined, 'value is required'),
  ttlMs: z.number().int().positive().optional(),
  ifVersion: z.number().int().nonnegative().optional(),
});

/**
 * The session routes (docs/sessions.md): `GET /sessions` (`cursor`, `limit` 1-100; `{ items,
 * nextCursor? }` newest first), `GET /sessions/:id` (its processes and state keys), `DELETE
 * /sessions/:id`, and `GET`, `PUT` (`{ value, ttlMs?, ifVersion? }`) and `DELETE
 * /sessions/:id/state/:key`. Another principal's session is 404 `NOT_FOUND`.
 */
export function registerSessionRoutes(app: Hono<HttpEnv>, sessions: Sessions): void {
  app.get('/sessions', async (c) => {
    const query = parseOrThrow(SessionListQuerySchema, c.req.query(), 'query');
    return c.json(await sessions.list(query, c.get('principal')));
  });
  app.get('/sessions/:id', async (c) => c.json(await sessions.get(c.req.param('id'), c.get('principal'))));
  app.delete('/sessions/:id', async (c) => {
    await sessions.delete(c.req.param('id'), c.get('principal'));
    return c.json({ session: c.req.param('id'), deleted: true });
  });
  app.get('/sessions/:id/state/:key', async (c) =>
    c.json(await sessions.getState(c.req.param('id'), c.req.param('key'), c.get('principal'))),
  );
  app.put('/sessions/:id/state/:key', requireJson, async (c) => {
    const body = parseOrThrow(StatePutBodySchema, await readJson(c), 'body');
    const { value, ...options } = body;
    return c.json(
      await sessions.setState(c.req.param('id'), c.req.param('key'), value, options, c.get('principal')),
    );
  });
  app.delete('/sessions/:id/state/:key', async (c) =>
    c.json(await sessions.deleteState(c.req.param('id'), c.req.param('key'), c.get('principal'))),
  );
}
