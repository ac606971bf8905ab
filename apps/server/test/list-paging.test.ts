import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ApprovalStore } from '../src/approvals/approval-store.ts';
import { ConversationStore } from '../src/chat/conversation-store.ts';
import { createServer } from '../src/server.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { suiteToolFileDir } from './support/greet-tools.ts';
import { allPages, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { mci } from './support/mci.ts';
import { httpClient } from './support/mcp-fixture.ts';
import type { Json } from './support/serve-process.ts';
import { storedProcess } from './support/stored-process.ts';

// The lists beside processes page alike (docs/protocol.md, "Lists that page"): GET /approvals, the
// MCP tool list_approvals and chat.list answer {items, nextCursor?} newest first, limit 1-100 (default 50), an opaque cursor, a
// VALIDATION error naming a bad limit or cursor, and only the caller's items. The records are written
// through the real stores into the SQLite file the server then opens.

// `charge` asks (destructive), so MCP sessions list the approval tools.
const { dir, file } = suiteToolFileDir(
  'mci-list-paging-',
  `schemaVersion: '1.0'
tools:
  - name: charge
    annotations: { destructiveHint: true }
    execution: { type: text, text: charged }
`,
);
const ALICE = 'alice-token-2b7d41c9';
const BOB = 'bob-token-a05e3f68';
const OPERATOR = 'operator-token-93c8d1e4';
const NOTHING_DELIVERED = { outputs: 0, stdout: 0, stderr: 0, tools: 0 };

/**
 * A server on a database with alice's processes 1-3 and bob's 4, 120 approvals of alice's processes
 * (ids growing with their index; every third one denied) and 10 of bob's, 60 conversations of
 * alice's and 5 of bob's. Returns the approval ids of each, oldest first.
 */
async function seededServer(name: string) {
  const db = join(dir, `${name}.db`);
  const store = await openSqliteStore({ path: db });
  for (let pid = 1; pid <= 4; pid++)
    store.putProcess(storedProcess(pid, { owner: pid <= 3 ? 'alice' : 'bob' }));
  await store.committed();
  const approvals = new ApprovalStore(store.tables.db);
  const ids = { alice: [] as string[], bob: [] as string[] };
  for (let i = 0; i < 130; i++) {
    const owner = i < 120 ? 'alice' : 'bob';
    const id = `ap_${(1_800_000_000_000 + i).toString(36).padStart(9, '0')}${i.toString(16).padStart(12, '0')}`;
    await approvals.suspend(
      {
        id,
        pid: owner === 'alice' ? (i % 3) + 1 : 4,
        run: 1,
        principal: owner,
        kind: 'tool',
        tool: 'charge',
        input: { amount: i },
        position: 0,
        state: 'pending',
        createdAt: new Date(1_800_000_000_000 + i).toISOString(),
        expiresAt: new Date(1_900_000_000_000).toISOString(),
      },
      NOTHING_DELIVERED,
    );
    if (owner === 'alice' && i % 3 === 0) await approvals.decide(id, 'denied', 'alice', 'no');
    ids[owner].push(id);
  }
  const conversations = new ConversationStore(store.tables);
  for (let i = 0; i < 65; i++) await conversations.create(i < 60 ? 'alice' : 'bob', `talk ${i}`, 'openai:m');
  await store.close();
  const server = await createServer({
    port: 0,
    check: 'off',
    file,
    db,
    logLevel: 'silent',
    tokens: [
      { token: ALICE, role: 'client', id: 'alice' },
      { token: BOB, role: 'client', id: 'bob' },
      { token: OPERATOR, role: 'operator', id: 'operator' },
    ],
  });
  return Object.assign(server, { ids });
}

/** Every approval on every page of `GET /approvals?query` for `token`. */
async function allApprovals(url: string, token: string, query: string): Promise<Json[]> {
  return (await allPages(url, '/approvals', query, token)).flatMap((page) => page.items as Json[]);
}

describe('lists that page: approvals and conversations', () => {
  it('GET /approvals: newest first, 50 by default, each once across pages, filters kept, only the caller’s', async () => {
    await using server = await seededServer('approvals');
    const newestFirst = [...server.ids.alice].reverse();
    const first = await request(server.url, 'GET', '/approvals?state=pending', undefined, ALICE);
    expect(first.body.items).toHaveLength(50);
    expect(first.body.nextCursor).toEqual(expect.any(String));

    const all = await allApprovals(server.url, ALICE, 'limit=7');
    expect(all.map((approval) => approval.id)).toEqual(newestFirst);
    const denied = await allApprovals(server.url, ALICE, 'limit=9&state=denied');
    expect(denied.map((approval) => approval.id)).toEqual(newestFirst.filter((_, i) => (119 - i) % 3 === 0));
    const ofPid2 = await allApprovals(server.url, ALICE, 'limit=11&pid=2');
    expect(ofPid2.map((approval) => approval.id)).toEqual(newestFirst.filter((_, i) => (119 - i) % 3 === 1));

    expect((await allApprovals(server.url, BOB, 'limit=100')).map((approval) => approval.id)).toEqual(
      [...server.ids.bob].reverse(),
    );
    expect(await allApprovals(server.url, OPERATOR, 'limit=100')).toHaveLength(130);
    // A cursor continues the caller's own list only.
    const bobFirst = await request(server.url, 'GET', '/approvals?limit=1', undefined, BOB);
    const aliceWithBobs = await request(
      server.url,
      'GET',
      `/approvals?limit=100&cursor=${encodeURIComponent(bobFirst.body.nextCursor)}`,
      undefined,
      ALICE,
    );
    expect((aliceWithBobs.body.items as Json[]).every((approval) => approval.principal === 'alice')).toBe(
      true,
    );
  });

  it('mci approvals pages through every approval; --limit N prints the newest N', async () => {
    await using server = await seededServer('approvals-cli');
    const env = { MCI_URL: server.url, MCI_TOKEN: ALICE };
    const ids = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).id as string);
    const all = await mci(['approvals', '--all', '--json'], { env });
    expect(all.code).toBe(0);
    expect(ids(all.stdout)).toEqual([...server.ids.alice].reverse());
    const newest = await mci(['approvals', '--all', '--json', '--limit', '3'], { env });
    expect(ids(newest.stdout)).toEqual([...server.ids.alice].reverse().slice(0, 3));
    expect((await mci(['approvals', '--limit', 'none'], { env })).code).toBe(2);
  });

  it('GET /approvals refuses a bad limit or cursor with VALIDATION naming it', async () => {
    await using server = await seededServer('approvals-hostile');
    for (const query of ['limit=0', 'limit=101', 'limit=1000', 'limit=x'])
      expect(await request(server.url, 'GET', `/approvals?${query}`, undefined, ALICE)).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION', path: 'limit' },
      });
    for (const cursor of ['garbage', Buffer.from('[7]').toString('base64url'), 'y'.repeat(1100)])
      expect(
        await request(server.url, 'GET', `/approvals?cursor=${encodeURIComponent(cursor)}`, undefined, ALICE),
      ).toMatchObject({ status: 400, body: { code: 'VALIDATION', path: 'cursor' } });
  });

  it('list_approvals over MCP: pending ones newest first, a page of 50 then the rest by nextCursor, only the caller’s; a bad cursor is a tool error naming it', async () => {
    await using server = await seededServer('approvals-mcp');
    const alice = await httpClient(server.url, ALICE);
    const bob = await httpClient(server.url, BOB);
    try {
      const list = async (client: typeof alice, args: Record<string, unknown>) =>
        (await client.callTool({ name: 'list_approvals', arguments: args })) as CallToolResult;
      const { tools } = await alice.listTools();
      expect(tools.find((tool) => tool.name === 'list_approvals')?.inputSchema.properties).toHaveProperty(
        'cursor',
      );

      const pages: Array<{ approvals: Json[]; nextCursor?: string }> = [];
      let cursor: string | undefined;
      do {
        const result = await list(alice, cursor === undefined ? {} : { cursor });
        expect(result.isError).toBeFalsy();
        const page = result.structuredContent as { approvals: Json[]; nextCursor?: string };
        const text = (result.content as Array<{ text: string }>)[0]!.text;
        if (page.nextCursor !== undefined) expect(text).toContain(`with cursor "${page.nextCursor}"`);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      const pending = [...server.ids.alice].reverse().filter((_, i) => (119 - i) % 3 !== 0);
      expect(pages.map((page) => page.approvals.length)).toEqual([50, 30]);
      expect(pages.flatMap((page) => page.approvals.map((approval) => approval.id))).toEqual(pending);
      const denied = (await list(alice, { state: 'denied' })).structuredContent as { approvals: Json[] };
      expect(denied.approvals).toHaveLength(40);

      // Another principal's approvals are not listed, whatever the cursor: bob's continue after
      // alice's cursor with none of hers (his are the newest), alice's after bob's newest are hers.
      const bobs = (await list(bob, {})).structuredContent as { approvals: Json[]; nextCursor?: string };
      expect(bobs).toEqual({ approvals: expect.any(Array) });
      expect(bobs.approvals.map((approval) => approval.id)).toEqual([...server.ids.bob].reverse());
      const bobsAfter = await list(bob, { cursor: pages[0]!.nextCursor! });
      expect(bobsAfter.structuredContent).toEqual({ approvals: [] });
      const bobsNewest = Buffer.from(JSON.stringify([server.ids.bob.at(-1)])).toString('base64url');
      const aliceAfterBob = (await list(alice, { cursor: bobsNewest })).structuredContent as {
        approvals: Json[];
      };
      expect(aliceAfterBob.approvals.map((approval) => approval.id)).toEqual(pending.slice(0, 50));

      for (const bad of ['garbage', Buffer.from('[7]').toString('base64url'), 'y'.repeat(1100)])
        expect(await list(alice, { cursor: bad })).toEqual({
          isError: true,
          content: [
            {
              type: 'text',
              text: 'list_approvals: cursor is not one this list gave (use the nextCursor of a page)',
            },
          ],
        });
      expect(await list(alice, { cursor: 7 })).toEqual({
        isError: true,
        content: [{ type: 'text', text: 'list_approvals: cursor must be the nextCursor of a page' }],
      });
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('chat.list: newest first a page at a time, with the conversations key, only the caller’s', async () => {
    await using server = await seededServer('conversations');
    await using alice = await openJsonSocket(server.wsUrl, ALICE);
    const first = await alice.request({ type: 'chat.list' });
    expect(first.result.items).toHaveLength(50);
    expect(first.result.conversations).toEqual(first.result.items);
    expect(first.result.models).toEqual([]);

    const listed: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await alice.request({
        type: 'chat.list',
        limit: 8,
        ...(cursor !== undefined && { cursor }),
      });
      listed.push(...page.result.items);
      cursor = page.result.nextCursor;
    } while (cursor !== undefined);
    const titles = listed.map((conversation) => conversation.title as string);
    expect(new Set(titles)).toEqual(new Set(Array.from({ length: 60 }, (_, i) => `talk ${i}`)));
    expect(titles).toHaveLength(60);
    // Newest first by creation time (several may share a millisecond; the id orders those).
    const times = listed.map((conversation) => conversation.createdAt as string);
    expect(times).toEqual([...times].sort().reverse());

    await using bob = await openJsonSocket(server.wsUrl, BOB);
    const bobs = await bob.request({ type: 'chat.list', limit: 100 });
    expect(bobs.result.items.map((conversation: Json) => conversation.title).sort()).toEqual(
      ['talk 60', 'talk 61', 'talk 62', 'talk 63', 'talk 64'].sort(),
    );
    expect(await alice.request({ type: 'chat.list', limit: 0 })).toMatchObject({
      type: 'error',
      code: 'VALIDATION',
      path: 'limit',
    });
    expect(await alice.request({ type: 'chat.list', cursor: 'nope' })).toMatchObject({
      type: 'error',
      code: 'VALIDATION',
      path: 'cursor',
    });
  });
});
