import { encodeOutputValue, type JsonValue, PageQuerySchema } from '@mci/protocol';
import type { RunFile } from '@mci/sandbox';
import { create as contentDisposition } from 'content-disposition';
import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.ts';
import { parsePid } from '../processes/limits.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import type { HttpEnv } from './http-env.ts';
import { requireJson } from './request-guard.ts';
import {
  CreateProcessBodySchema,
  ListQuerySchema,
  SignalBodySchema,
  SignalParamSchema,
} from './request-schemas.ts';
import { parseOrThrow } from './validate.ts';

/**
 * The process routes of the MCI process API: create (optionally `block`ing until idle), list, read,
 * delete, code/output/stdout/stderr/runs, the calls and files of runs, and the run/kill signals. Bodies must be
 * `application/json`. A reply to a change waits until the change is committed (the manager's
 * create, signal and delete resolve only then), so that in a cluster the client's next request sees
 * it on any node.
 */
export function registerProcessRoutes(app: Hono<HttpEnv>, manager: ProcessManager, logger?: Logger): void {
  const json = (c: Context, body: unknown, status: ContentfulStatusCode = 200) =>
    sendJson(c, body, status, logger);

  app.post('/processes', requireJson, async (c) => {
    const body = parseOrThrow(CreateProcessBodySchema, await readJson(c), 'body');
    const timeoutMs = body.timeoutMs !== undefined ? body.timeoutMs : body.timeout;
    const principal = c.get('principal');
    const created = await manager.create(
      {
        code: body.code,
        ...(body.lang !== undefined && { lang: body.lang }),
        ...(body.ref !== undefined && { ref: body.ref }),
        ...(timeoutMs !== undefined && { timeoutMs }),
        ...(body.memoryLimitMb !== undefined && { memoryLimitMb: body.memoryLimitMb }),
        ...(body.autorun !== undefined && { autorun: body.autorun }),
        ...(body.check !== undefined && { check: body.check }),
        ...(body.metadata !== undefined && { metadata: body.metadata }),
        ...(body.session !== undefined && { session: body.session }),
      },
      principal,
    );
    if (body.block && body.autorun !== false)
      return json(c, await finalResult(manager, created.pid, principal), 201);
    return c.json(
      { pid: created.pid, ...(created.session !== undefined && { session: created.session }) },
      201,
    );
  });

  // A page of the visible processes, newest first (docs/protocol.md, "Lists that page").
  app.get('/processes', async (c) => {
    const query = parseOrThrow(ListQuerySchema, c.req.query(), 'query');
    const { status, ...rest } = query;
    const filter = { ...rest, ...(status !== undefined && { status: status === 'null' ? null : status }) };
    const page = await manager.list(filter, c.get('principal'));
    // `processes` repeats the items for the MCI reference chat client, which reads that key.
    return c.json({ ...page, processes: page.items });
  });

  app.get('/processes/:pid', async (c) => c.json(await manager.get(pid(c), c.get('principal'))));

  app.delete('/processes/:pid', async (c) => {
    const id = pid(c);
    await manager.delete(id, c.get('principal'));
    return c.json({ pid: id, deleted: true });
  });

  app.get('/processes/:pid/code', async (c) => text(c, await manager.getCode(pid(c), c.get('principal'))));
  app.get('/processes/:pid/output', async (c) => {
    const result = await manager.getResult(pid(c), c.get('principal'));
    return json(c, { output: outputOf(result.outputs), outputs: result.outputs, run: result.run });
  });
  app.get('/processes/:pid/stdout', async (c) =>
    text(c, (await manager.getResult(pid(c), c.get('principal'))).stdout),
  );
  app.get('/processes/:pid/stderr', async (c) =>
    text(c, (await manager.getResult(pid(c), c.get('principal'))).stderr),
  );
  app.get('/processes/:pid/runs/:n', async (c) => {
    return json(c, await manager.getRun(pid(c), parsePid(c.req.param('n'), 'n'), c.get('principal')));
  });

  // The manager checks the page after visibility: another principal's process is 404 whatever the query.
  app.get('/processes/:pid/runs', async (c) => {
    const { limit, cursor } = parseOrThrow(PageQuerySchema, c.req.query(), 'query');
    const page = { ...(limit !== undefined && { limit }), ...(cursor !== undefined && { cursor }) };
    return json(c, await manager.listRuns(pid(c), page, c.get('principal')));
  });

  app.get('/processes/:pid/runs/:n/calls', async (c) => {
    const { limit, cursor } = parseOrThrow(PageQuerySchema, c.req.query(), 'query');
    const page = { ...(limit !== undefined && { limit }), ...(cursor !== undefined && { cursor }) };
    return json(
      c,
      await manager.listCalls(pid(c), parsePid(c.req.param('n'), 'n'), page, c.get('principal')),
    );
  });

  app.get('/processes/:pid/runs/:n/files/:name', async (c) => {
    const file = await manager.getFile(
      pid(c),
      parsePid(c.req.param('n'), 'n'),
      c.req.param('name'),
      c.get('principal'),
    );
    return c.body(file.data as Uint8Array<ArrayBuffer>, 200, fileHeaders(file));
  });

  app.post('/processes/:pid/signals/:signal', requireJson, async (c) => {
    const id = pid(c);
    const { signal } = parseOrThrow(SignalParamSchema, { signal: c.req.param('signal') }, 'path');
    const body = parseOrThrow(SignalBodySchema, await readJson(c, true), 'body');
    const principal = c.get('principal');
    const snapshot = await manager.signal(
      id,
      signal,
      principal,
      body.force === undefined ? undefined : { force: body.force },
    );
    if (signal === 'run' && body.block) return json(c, await finalResult(manager, id, principal));
    return c.json(snapshot);
  });
}

/** Waits for the process to be idle and returns its snapshot with the latest run's outputs and logs. */
async function finalResult(manager: ProcessManager, pid: number, principal: Principal) {
  await manager.wait(pid, principal);
  await manager.committed();
  return manager.getResult(pid, principal);
}

/**
 * The `output` field of `GET /processes/:pid/output`, as a model reads it: the value of the one
 * `output()` call, the array of values when there were several, `null` when there was none.
 */
export function outputOf(outputs: readonly unknown[]): unknown {
  if (outputs.length === 0) return null;
  return outputs.length === 1 ? outputs[0] : outputs;
}

/**
 * Answers `body` as JSON. Output values are JSON already (the output encoding); should a value still
 * fail to serialize, the failure is logged and the body is sent in the output encoding, with status
 * `status`, instead of a 500.
 */
function sendJson(c: Context, body: unknown, status: ContentfulStatusCode, logger?: Logger): Response {
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    logger?.error(
      { err: error, path: c.req.path },
      'response not serializable as JSON: sent in the output encoding',
    );
    text = JSON.stringify(encodeOutputValue(body) satisfies JsonValue);
  }
  return c.body(text, status, { 'Content-Type': 'application/json' });
}

/**
 * The headers of a run's file: its type, and never a page of this origin. Pictures and text that a
 * browser cannot run are shown inline; anything else (HTML, SVG, XML, scripts, unknown types) is an
 * attachment, and a CSP sandbox keeps even a file opened directly from running scripts.
 */
function fileHeaders(file: RunFile): Record<string, string> {
  const type = file.mimeType.toLowerCase();
  const inline = SAFE_INLINE.has(type);
  return {
    'Content-Type': type.startsWith('text/') && inline ? `${type}; charset=utf-8` : type,
    'Content-Disposition': contentDisposition(file.name, { type: inline ? 'inline' : 'attachment' }),
    'Content-Length': String(file.data.byteLength),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
  };
}

/** Types a browser shows without running anything: safe to show inline. */
const SAFE_INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'text/plain',
  'text/csv',
  'application/json',
  'application/pdf',
  'audio/mpeg',
  'audio/wav',
  'audio/ogg',
  'video/mp4',
  'video/webm',
]);

function pid(c: Context<HttpEnv>): number {
  return parsePid(c.req.param('pid'));
}

function text(c: Context, body: string): Response {
  return c.text(body, 200, { 'Content-Type': 'text/plain; charset=utf-8' });
}

/** The JSON body of a request (`{}` for an empty `optional` one). @throws ServerError `VALIDATION`. */
export async function readJson(c: Context, optional = false): Promise<unknown> {
  const raw = await c.req.text();
  if (raw.trim() === '') {
    if (optional) return {};
    throw new ServerError('VALIDATION', 'body: a JSON object is required', { path: 'body' });
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new ServerError('VALIDATION', `body is not valid JSON: ${(error as Error).message}`, {
      path: 'body',
      cause: error,
    });
  }
}
