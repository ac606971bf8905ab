import { ApprovalStateSchema, PageQuerySchema } from '@mci/protocol';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Approvals } from '../approvals/approvals.ts';
import type { HttpEnv } from './http-env.ts';
import { readJson } from './process-routes.ts';
import { requireJson } from './request-guard.ts';
import { parseOrThrow } from './validate.ts';

const ApprovalListQuerySchema = PageQuerySchema.extend({
  state: ApprovalStateSchema.optional(),
  pid: z.coerce.number().int().positive().optional(),
}).strict();

const DecisionBodySchema = z.strictObject({ reason: z.string().max(2000).optional() });

const PoliciesBodySchema = z.strictObject({ rules: z.array(z.unknown()) });

/**
 * The approval and policy routes (docs/approvals.md): `GET /approvals` (`state`, `pid`, `cursor`,
 * `limit` 1-100; `{ items, nextCursor? }` newest first), `GET /approvals/:id`, `POST /approvals/:id/approve` and `/deny`
 * (optional `{ reason }`; 409 `NOT_PENDING` once decided), `GET /policies` and `PUT /policies`
 * (`{ rules }`, operators only). A client sees and decides the approvals of its own processes only.
 */
export function registerApprovalRoutes(app: Hono<HttpEnv>, approvals: Approvals): void {
  app.get('/approvals', async (c) => {
    const query = parseOrThrow(ApprovalListQuerySchema, c.req.query(), 'query');
    return c.json(await approvals.list(query, c.get('principal')));
  });
  app.get('/approvals/:id', async (c) => c.json(await approvals.get(c.req.param('id'), c.get('principal'))));
  for (const decision of ['approve', 'deny'] as const) {
    app.post(`/approvals/:id/${decision}`, async (c) => {
      const body = parseOrThrow(DecisionBodySchema, await readJson(c, true), 'body');
      return c.json(await approvals.decide(c.req.param('id'), decision, c.get('principal'), body.reason));
    });
  }
  app.get('/policies', (c) => c.json(approvals.policySet()));
  app.put('/policies', requireJson, async (c) => {
    const body = parseOrThrow(PoliciesBodySchema, await readJson(c), 'body');
    return c.json(await approvals.setPolicies(body.rules, c.get('principal')));
  });
}
