import { PageQuerySchema } from '@mci/protocol';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { HttpEnv } from '../http/http-env.ts';
import { readJson } from '../http/process-routes.ts';
import { requireJson } from '../http/request-guard.ts';
import { parseOrThrow } from '../http/validate.ts';
import type { Skills } from './skills.ts';

const SkillListQuerySchema = PageQuerySchema.strict();
const VersionSchema = z.coerce.number().int().positive();

/**
 * The skill routes (docs/protocol.md, "Skills"): `POST /skills` (`{ name, description, code,
 * inputSchema? }`: 201 with the saved version; 400 `CHECK_FAILED` with `diagnostics` when the code
 * does not compile), `GET /skills` (`cursor`, `limit` 1-100; `{ items, nextCursor? }` newest first),
 * `GET /skills/:name` (the latest version), `GET /skills/:name/versions/:version`, and
 * `DELETE /skills/:name` (every version). A client sees its own skills only.
 */
export function registerSkillRoutes(app: Hono<HttpEnv>, skills: Skills): void {
  app.post('/skills', requireJson, async (c) =>
    c.json(await skills.save(c.get('principal'), await readJson(c)), 201),
  );
  app.get('/skills', async (c) => {
    const query = parseOrThrow(SkillListQuerySchema, c.req.query(), 'query');
    return c.json(await skills.list(c.get('principal'), query));
  });
  app.get('/skills/:name', async (c) => c.json(await skills.get(c.get('principal'), c.req.param('name'))));
  app.get('/skills/:name/versions/:version', async (c) => {
    const version = parseOrThrow(VersionSchema, c.req.param('version'), 'version');
    return c.json(await skills.get(c.get('principal'), c.req.param('name'), version));
  });
  app.delete('/skills/:name', async (c) => {
    await skills.delete(c.get('principal'), c.req.param('name'));
    return c.body(null, 204);
  });
}
