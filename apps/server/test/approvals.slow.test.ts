import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { connect, type ServerEvent } from '@mci/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from './support/http.ts';
import { mci } from './support/mci.ts';
import { freshDatabase } from './support/postgres.ts';
import { type Json, serveProcesses } from './support/serve-process.ts';
import { until } from './support/until.ts';

// Policies and approvals through `mci serve`, with http tools in front of a real local service that
// counts the calls it gets: a destructive tool asks, the process suspends without a sandbox slot,
// survives kill -9 of the server, and once approved every side effect has happened exactly once.

const dir = mkdtempSync(join(tmpdir(), 'mci-approvals-'));
/** The suite's principals, as the `tokens` of its config files. */
const TOKENS_YAML = `tokens:
  - { token: op-token, role: operator, id: op }
  - { token: alice-token, role: client, id: alice }
  - { token: bob-token, role: client, id: bob }`;
const calls = new Map<string, number>();
let service: Server;
let serviceUrl = '';

beforeAll(async () => {
  service = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    calls.set(path, (calls.get(path) ?? 0) + 1);
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${path.slice(1)} ${body}`);
    });
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const address = service.address() as { port: number };
  serviceUrl = `http://127.0.0.1:${address.port}`;
  writeFileSync(
    join(dir, 'tools.yaml'),
    `schemaVersion: '1.0'
tools:
  - name: lookup
    annotations: { readOnlyHint: true }
    execution: { type: http, url: '${serviceUrl}/lookup' }
  - name: charge
    annotations: { destructiveHint: true }
    inputSchema: { type: object, properties: { amount: { type: number } }, required: [amount] }
    execution:
      type: http
      method: POST
      url: '${serviceUrl}/charge'
      body: { type: json, content: { amount: '{!!props.amount!!}' } }
  - name: delete_all
    execution: { type: http, method: POST, url: '${serviceUrl}/delete_all' }
`,
  );
  writeFileSync(
    join(dir, 'config.yaml'),
    `file: tools.yaml
${TOKENS_YAML}
policies:
  - { tool: 'delete_*', decision: deny }
approvals:
  timeoutMs: 60000
`,
  );
});
afterAll(async () => {
  service?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { serve } = serveProcesses(dir);
const count = (path: string) => calls.get(path) ?? 0;

function client(url: string, token: string) {
  return (method: string, path: string, body?: unknown) => request(url, method, path, body, token);
}

type Call = ReturnType<typeof client>;

const processOf = (call: Call, pid: number) => call('GET', `/processes/${pid}`).then((a) => a.body as Json);
const suspended = (call: Call, pid: number) =>
  until(
    `process ${pid} suspended`,
    () => processOf(call, pid),
    (p) => p.state === 'suspended',
  );
const idle = (call: Call, pid: number) =>
  until(
    `process ${pid} idle`,
    () => processOf(call, pid),
    (p) => p.state === 'idle',
  );

const PROGRAM = `
const looked = await tools.lookup({});
output(looked.content[0].text);
console.log('before the charge');
try { await tools.delete_all({}); } catch (e) { output(e.code); }
// Math.random draws the same numbers when the run replays: this input matches the call log.
await tools.lookup({ n: Math.random() });
const charged = await tools.charge({ amount: 5 });
output(charged.content[0].text);
`;

describe('approvals', { timeout: 60_000 }, () => {
  it('ask -> suspended -> kill -9 of the server -> approve: each side effect once, outputs once', {
    timeout: 120_000,
  }, async () => {
    const db = join(dir, 'restart.db');
    const first = serve(['--config', 'config.yaml', '--db', db]);
    let alice = client(await first.url, 'alice-token');
    const created = await alice('POST', '/processes', { code: PROGRAM });
    expect(created.status).toBe(201);
    const pid = created.body.pid as number;
    const waiting = await suspended(alice, pid);
    expect(waiting.pendingApprovals).toHaveLength(1);
    const [id] = waiting.pendingApprovals as [string];
    expect(count('/lookup')).toBe(2);
    expect(count('/charge')).toBe(0);
    expect(count('/delete_all')).toBe(0);
    const pending = await alice('GET', '/approvals?state=pending');
    expect(pending.body.items).toEqual([
      expect.objectContaining({ id, pid, run: 1, principal: 'alice', kind: 'tool', tool: 'charge' }),
    ]);
    expect(pending.body.items[0].input).toEqual({ amount: 5 });
    // Writes commit in order: once this create is acknowledged, the suspension is durable too.
    await alice('POST', '/processes', { code: 'output(1)' });

    first.child.kill('SIGKILL');
    await first.exited;
    const second = serve(['--config', 'config.yaml', '--db', db]);
    alice = client(await second.url, 'alice-token');
    expect(await processOf(alice, pid)).toMatchObject({ state: 'suspended', pendingApprovals: [id] });

    const decisions = await Promise.all([
      alice('POST', `/approvals/${id}/approve`),
      alice('POST', `/approvals/${id}/approve`, { reason: 'twice' }),
    ]);
    expect(decisions.map((d) => d.status).sort()).toEqual([200, 409]);
    expect(decisions.find((d) => d.status === 409)!.body.code).toBe('NOT_PENDING');
    const done = await idle(alice, pid);
    expect(done).toMatchObject({ status: 'success', run: 1 });
    expect(count('/lookup')).toBe(2);
    expect(count('/charge')).toBe(1);
    expect(count('/delete_all')).toBe(0);
    const result = (await alice('GET', `/processes/${pid}/runs/1`)).body;
    expect(result.outputs).toEqual(['lookup ', 'POLICY_DENIED', 'charge {"amount":5}']);
    expect(result.stdout).toBe('before the charge\n');
    expect(result.stderr).toBe('');
    expect((await alice('GET', `/approvals/${id}`)).body).toMatchObject({
      state: 'approved',
      decidedBy: 'alice',
    });
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('deny and expiry reject the call in the sandbox; a kill cancels; others see nothing', {
    timeout: 120_000,
  }, async () => {
    writeFileSync(
      join(dir, 'short.yaml'),
      `file: tools.yaml
${TOKENS_YAML}
approvals: { timeoutMs: 1500 }
`,
    );
    const server = serve(['--config', 'short.yaml', '--db', join(dir, 'deny.db')]);
    const url = await server.url;
    const alice = client(url, 'alice-token');
    const bob = client(url, 'bob-token');
    const op = client(url, 'op-token');
    const catching = `try { await tools.charge({ amount: 1 }); } catch (e) { output([e.code, e.message]); }`;
    const charges = count('/charge');

    const denied = (await alice('POST', '/processes', { code: catching })).body.pid as number;
    const [deniedId] = (await suspended(alice, denied)).pendingApprovals as [string];
    // Bob neither sees nor decides Alice's approval; an operator sees it.
    expect((await bob('GET', `/approvals/${deniedId}`)).status).toBe(404);
    expect((await bob('POST', `/approvals/${deniedId}/deny`)).status).toBe(404);
    expect((await bob('GET', '/approvals')).body.items).toEqual([]);
    expect((await op('GET', `/approvals?pid=${denied}`)).body.items).toHaveLength(1);
    // The command line lists and decides as the token's principal.
    const env = { MCI_URL: url, MCI_TOKEN: 'alice-token' };
    const listed = await mci(['approvals'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^${deniedId}  pending   pid ${denied}  charge\\(\\{"amount":1\\}\\)`),
    );
    expect((await mci(['deny', deniedId], { env: { ...env, MCI_TOKEN: 'bob-token' } })).code).toBe(1);
    const deniedRun = await mci(['deny', deniedId, '--reason', 'not today'], { env });
    expect(deniedRun.code).toBe(0);
    expect(deniedRun.stdout).toContain('denied    pid');
    const again = await mci(['approve', deniedId], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`approval ${deniedId} is denied: only a pending approval can be decided`);
    await idle(alice, denied);
    expect((await alice('GET', `/processes/${denied}/runs/1`)).body.outputs).toEqual([
      ['APPROVAL_DENIED', 'Tool charge failed: the call of charge was denied by alice: not today'],
    ]);

    const expired = (await alice('POST', '/processes', { code: catching })).body.pid as number;
    await suspended(alice, expired);
    expect((await idle(alice, expired)).status).toBe('success');
    const [[code]] = (await alice('GET', `/processes/${expired}/runs/1`)).body.outputs;
    expect(code).toBe('APPROVAL_EXPIRED');

    const killed = (await alice('POST', '/processes', { code: catching })).body.pid as number;
    const [killedId] = (await suspended(alice, killed)).pendingApprovals as [string];
    expect((await bob('POST', `/processes/${killed}/signals/kill`, {})).status).toBe(404);
    expect((await alice('POST', `/processes/${killed}/signals/kill`, {})).status).toBe(200);
    expect(await processOf(alice, killed)).toMatchObject({ state: 'idle', status: 'canceled' });
    expect((await alice('GET', `/approvals/${killedId}`)).body.state).toBe('canceled');
    expect((await alice('POST', `/approvals/${killedId}/approve`)).body.code).toBe('NOT_PENDING');
    expect(count('/charge')).toBe(charges);
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('operators set the rules at run time; GET /tools shows each decision; bad rules are named', async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'policies.db')]);
    const url = await server.url;
    const alice = client(url, 'alice-token');
    const op = client(url, 'op-token');
    const decisions = async () =>
      Object.fromEntries(
        ((await alice('GET', '/tools')).body.tools as Json[]).map((t) => [t.name, [t.decision, t.rule]]),
      );
    expect(await decisions()).toEqual({
      lookup: ['allow', undefined],
      charge: ['ask', undefined],
      delete_all: ['deny', 0],
    });
    expect((await op('GET', '/policies')).body).toMatchObject({ source: 'config' });
    expect((await alice('PUT', '/policies', { rules: [] })).status).toBe(403);
    const bad = await op('PUT', '/policies', { rules: [{ tool: 'x', decision: 'maybe' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.path).toBe('rules.0.decision');
    const mixed = await op('PUT', '/policies', { rules: [{ tool: 'x', fetch: 'a.com', decision: 'deny' }] });
    expect(mixed.body.message).toContain('a rule matches tools or fetch, not both');
    const set = await op('PUT', '/policies', {
      rules: [
        { tool: 'charge', decision: 'allow' },
        { annotation: 'readOnlyHint', decision: 'deny' },
      ],
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ source: 'stored', updatedBy: 'op' });
    expect(await decisions()).toEqual({
      lookup: ['deny', 1],
      charge: ['allow', 0],
      delete_all: ['allow', undefined],
    });
    // The stored rules outlive a restart (the config file's are only the initial ones).
    server.child.kill('SIGTERM');
    await server.exited;
    const again = serve(['--config', 'config.yaml', '--db', join(dir, 'policies.db')]);
    const op2 = client(await again.url, 'op-token');
    expect((await op2('GET', '/policies')).body.rules).toEqual(set.body.rules);
    again.child.kill('SIGTERM');
    await again.exited;
  });

  it('100 suspended processes hold no sandbox: other work runs; a diverging replay fails', {
    timeout: 120_000,
  }, async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'many.db'), '--concurrency', '2']);
    const url = await server.url;
    const alice = client(url, 'alice-token');
    const pids = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const answer = await alice('POST', '/processes', { code: `await tools.charge({ amount: ${i} })` });
        return answer.body.pid as number;
      }),
    );
    await until(
      '100 suspended',
      () => alice('GET', '/processes?state=suspended&limit=100'),
      (answer) => answer.body.processes.length === 100,
    );
    const other = await alice('POST', '/processes', { code: 'output(1 + 1)', block: true });
    expect(other.body).toMatchObject({ state: 'idle', status: 'success', outputs: [2] });
    expect(pids).toHaveLength(100);

    // A program that calls something else when it runs again fails with REPLAY_DIVERGED.
    const diverging = `
      const n = globalThis.first === undefined ? Date.now() % 2 : 0;
      await tools.lookup({});
      await tools.charge({ amount: 1 });
      await tools.lookup({ again: Date.now() });`;
    const pid = (await alice('POST', '/processes', { code: diverging.replace('Date.now() % 2', '1') })).body
      .pid as number;
    const [id] = (await suspended(alice, pid)).pendingApprovals as [string];
    // The replay calls lookup with the same input, then the approved charge acts once, then new calls go on.
    expect((await alice('POST', `/approvals/${id}/approve`)).status).toBe(200);
    expect((await idle(alice, pid)).status).toBe('success');

    const random = `await tools.lookup({ n: Math.random() < 2 ? Date.now() : 0 }); await tools.charge({ amount: 2 });`;
    const drifting = (await alice('POST', '/processes', { code: random })).body.pid as number;
    const [driftId] = (await suspended(alice, drifting)).pendingApprovals as [string];
    await new Promise((resolve) => setTimeout(resolve, 5));
    await alice('POST', `/approvals/${driftId}/approve`);
    const failed = await idle(alice, drifting);
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.error.message).toContain('REPLAY_DIVERGED');
    expect(failed.error.message).toContain('call 1');
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('on a 2-node cluster: the node that ran it is killed -9, the other node approves and runs it', {
    timeout: 120_000,
  }, async () => {
    await using db = await freshDatabase();
    const node = (name: string) =>
      serve([
        '--config',
        'config.yaml',
        '--db',
        db.url,
        '--cluster',
        '--node',
        name,
        '--node-lease-ms',
        '2000',
      ]);
    const a = node('a');
    const b = node('b');
    const onA = client(await a.url, 'alice-token');
    const onB = client(await b.url, 'alice-token');
    const before = { lookup: count('/lookup'), charge: count('/charge') };
    const pid = (await onA('POST', '/processes', { code: PROGRAM })).body.pid as number;
    const [id] = (await suspended(onA, pid)).pendingApprovals as [string];
    await onA('POST', '/processes', { code: 'output(1)' });
    a.child.kill('SIGKILL');
    await a.exited;
    expect(await processOf(onB, pid)).toMatchObject({ state: 'suspended', pendingApprovals: [id] });
    expect((await onB('POST', `/approvals/${id}/approve`)).status).toBe(200);
    expect(await idle(onB, pid)).toMatchObject({ status: 'success' });
    expect(count('/lookup') - before.lookup).toBe(2);
    expect(count('/charge') - before.charge).toBe(1);
    expect((await onB('GET', `/processes/${pid}/runs/1`)).body.outputs).toEqual([
      'lookup ',
      'POLICY_DENIED',
      'charge {"amount":5}',
    ]);
    b.child.kill('SIGTERM');
    await b.exited;
  });

  it('over the WebSocket: approval events to those who see the process, approval.decide', async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'ws.db')]);
    const url = await server.url;
    await using alice = await connect(url, { token: 'alice-token' });
    await using bob = await connect(url, { token: 'bob-token' });
    const seen: Record<string, ServerEvent[]> = { alice: [], bob: [] };
    alice.subscribe({ all: true }, { onEvent: (event) => seen.alice!.push(event) });
    bob.subscribe({ all: true }, { onEvent: (event) => seen.bob!.push(event) });
    const { pid } = await alice.createProcess('output((await tools.charge({ amount: 3 })).content[0].text)');
    const approvalEvents = () => seen.alice!.filter((event) => event.type === 'approval');
    await until(
      'the pending approval event',
      async () => approvalEvents(),
      (events) => events.length === 1,
    );
    const [asked] = approvalEvents();
    expect(asked).toMatchObject({
      type: 'approval',
      pid,
      run: 1,
      approval: { state: 'pending', tool: 'charge' },
    });
    const id = (asked as { approval: { id: string } }).approval.id;
    await expect(bob.approve(id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await alice.approve(id, { reason: 'ok' })).toMatchObject({ id, state: 'approved', reason: 'ok' });
    await expect(alice.deny(id)).rejects.toMatchObject({ code: 'NOT_PENDING' });
    expect(await alice.wait(pid, { timeoutMs: 30_000 })).toMatchObject({ state: 'idle', status: 'success' });
    expect(
      approvalEvents().map((event) => (event as { approval: { state: string } }).approval.state),
    ).toEqual(['pending', 'approved']);
    expect(seen.bob).toEqual([]);
    expect((await alice.listApprovals({ state: 'approved' })).items.map((a) => a.id)).toEqual([id]);
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('over MCP: an elicitation asks the client; a task is input_required; tools list and decide', async () => {
    const server = serve(['--config', 'config.yaml', '--db', join(dir, 'mcp.db')]);
    const mcpUrl = new URL('/mcp', await server.url);
    const headers = { Authorization: 'Bearer alice-token' };
    const code =
      'try { output((await tools.charge({ amount: 7 })).content[0].text) } catch (e) { output(e.code) }';

    // A client that answers elicitations: the approval is put to it while run_code waits.
    const asking = new Client(
      { name: 'asking', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const questions: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await asking.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
    const answered = (await asking.callTool({ name: 'run_code', arguments: { code } })) as CallToolResult;
    expect(questions).toEqual([
      expect.stringContaining('wants to call charge with {"amount":7}. Approve this call?'),
    ]);
    expect(answered.content).toEqual([
      { type: 'text', text: 'block 0 (pid 1): success\noutput: "charge {\\"amount\\":7}"' },
    ]);
    await asking.close();

    // A client with neither: its task is input_required; it lists and decides with the tools.
    const plain = new Client({ name: 'plain', version: '1.0.0' });
    await plain.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
    const { task } = await plain.request(
      { method: 'tools/call', params: { name: 'run_code', arguments: { code }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    await until(
      'the task input_required',
      () => plain.experimental.tasks.getTask(task.taskId),
      (current) => current.status === 'input_required',
    );
    const listed = (await plain.callTool({ name: 'list_approvals', arguments: {} })) as CallToolResult;
    const [pending] = (listed.structuredContent as { approvals: Array<{ id: string; tool: string }> })
      .approvals;
    expect(pending).toMatchObject({ tool: 'charge' });
    const decided = (await plain.callTool({
      name: 'decide_approval',
      arguments: { id: pending!.id, decision: 'deny', reason: 'no' },
    })) as CallToolResult;
    expect(decided.isError).toBeFalsy();
    const again = (await plain.callTool({
      name: 'decide_approval',
      arguments: { id: pending!.id, decision: 'approve' },
    })) as CallToolResult;
    expect(again).toMatchObject({ isError: true });
    await until(
      'the task completed',
      () => plain.experimental.tasks.getTask(task.taskId),
      (current) => current.status === 'completed',
    );
    const result = await plain.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(JSON.stringify(result.content)).toContain('APPROVAL_DENIED');
    await plain.close();
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('fetch rules: deny refuses before any request, ask suspends; the replay answers earlier fetches from the log', async () => {
    const port = new URL(serviceUrl).port;
    writeFileSync(
      join(dir, 'fetch.yaml'),
      `file: tools.yaml
allowNet: ['127.0.0.1']
policies:
  - { fetch: '127.0.0.1:*', methods: [DELETE], decision: deny }
  - { fetch: '127.0.0.1:${port}', methods: [post], decision: ask }
`,
    );
    const server = serve(['--config', 'fetch.yaml', '--db', join(dir, 'fetch.db')]);
    const url = await server.url;
    const call = (method: string, path: string, body?: unknown) => request(url, method, path, body);
    const before = { lookup: count('/lookup'), charge: count('/charge'), deleteAll: count('/delete_all') };
    const code = `
      output(await (await fetch('${serviceUrl}/lookup')).text());
      try { await fetch('${serviceUrl}/delete_all', { method: 'DELETE' }); } catch (e) { output([e.code, e.message]); }
      output(await (await fetch('${serviceUrl}/charge', { method: 'POST', body: 'x=1' })).text());`;
    const pid = (await call('POST', '/processes', { code })).body.pid as number;
    const waiting = await suspended(call, pid);
    const approval = (await call('GET', `/approvals/${(waiting.pendingApprovals as [string])[0]}`)).body;
    expect(approval).toMatchObject({ kind: 'fetch', method: 'POST', url: `${serviceUrl}/charge` });
    expect(count('/charge') - before.charge).toBe(0);
    expect((await call('POST', `/approvals/${approval.id}/approve`)).status).toBe(200);
    expect(await idle(call, pid)).toMatchObject({ status: 'success' });
    expect((await call('GET', `/processes/${pid}/runs/1`)).body.outputs).toEqual([
      'lookup ',
      ['POLICY_DENIED', `fetch DELETE ${serviceUrl}/delete_all is denied by policy rule 1`],
      'charge x=1',
    ]);
    expect(count('/lookup') - before.lookup).toBe(1);
    expect(count('/charge') - before.charge).toBe(1);
    expect(count('/delete_all') - before.deleteAll).toBe(0);
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('a decision whose server stopped before it resumed the process: the next sweep resumes it', async () => {
    const db = join(dir, 'unresumed.db');
    const first = serve(['--config', 'config.yaml', '--db', db]);
    const before = count('/charge');
    let alice = client(await first.url, 'alice-token');
    const pid = (await alice('POST', '/processes', { code: 'await tools.charge({ amount: 9 })' })).body
      .pid as number;
    await suspended(alice, pid);
    // Writes commit in order: once this create is acknowledged, the suspension is durable too.
    await alice('POST', '/processes', { code: 'output(1)' });
    first.child.kill('SIGKILL');
    await first.exited;
    // As if a node decided and stopped at once: approved in the database, the process still suspended.
    const file = new DatabaseSync(db);
    file
      .prepare("UPDATE approvals SET state = 'approved', decided_at = ?, decided_by = 'alice' WHERE pid = ?")
      .run(new Date(Date.now() - 60_000).toISOString(), pid);
    file.close();
    const second = serve(['--config', 'config.yaml', '--db', db]);
    alice = client(await second.url, 'alice-token');
    expect(await idle(alice, pid)).toMatchObject({ status: 'success' });
    expect(count('/charge') - before).toBe(1);
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
