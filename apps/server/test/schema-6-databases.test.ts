import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationStore } from '../src/chat/conversation-store.ts';
import type { ProcessStore } from '../src/processes/process-store.ts';
import { openPostgresStore } from '../src/store/sql/open-postgres.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { freshDatabase } from './support/postgres.ts';

// Databases written by the store of an earlier release (schema version 6): today's store opens them
// in place and reads back every record, as that release read them (fixtures/schema-6/README.md).

const FIXTURES = new URL('./fixtures/schema-6/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', FIXTURES), 'utf8')) as {
  counters: { lastPid: number; lastSeq: number };
  processes: Array<{ record: { pid: number; runs: number }; runs: unknown[] }>;
  events: unknown[];
  conversations: Record<
    'sqlite' | 'postgres',
    Array<{ conversation: { conversationId: string; owner: string }; messages: unknown[] }>
  >;
};

/** Every record the fixture holds, read through today's store, in the shape `expected.json` has. */
async function readAll(store: ProcessStore) {
  const processes = [];
  for (const { record } of expected.processes) {
    const stored = await store.getProcess(record.pid);
    const runs = [];
    for (let run = 1; run <= (stored?.runs ?? 0); run++) runs.push(await store.getRun(record.pid, run));
    processes.push({ record: stored, runs });
  }
  return {
    counters: store.counters(),
    processes,
    listed: (await store.listProcesses({})).map((p) => p.pid),
    events: (await store.eventsSince(0, {})).map((stored) => JSON.parse(JSON.stringify(stored))),
  };
}

/** The conversations of the owners in `expected`, with their messages. */
async function readConversations(conversations: ConversationStore, engine: 'sqlite' | 'postgres') {
  const found = [];
  for (const { conversation } of expected.conversations[engine]) {
    found.push({
      conversation: await conversations.get(conversation.conversationId),
      messages: await conversations.messages(conversation.conversationId),
    });
  }
  return found;
}

function expectSameRecords(read: Awaited<ReturnType<typeof readAll>>) {
  expect(read.counters).toEqual(expected.counters);
  expect(JSON.parse(JSON.stringify(read.processes))).toEqual(expected.processes);
  expect(read.listed).toEqual(expected.processes.map((p) => p.record.pid).sort((a, b) => b - a));
  expect(read.events).toEqual(expected.events);
}

const directories: string[] = [];
afterAll(() => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

describe('a schema-6 database of an earlier release', () => {
  it('SQLite: opens in place and reads back every process, run, output, log, event and message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mci-schema6-'));
    directories.push(dir);
    const path = join(dir, 'mci.db');
    copyFileSync(new URL('mci.db', FIXTURES), path);
    const store = await openSqliteStore({ path });
    try {
      expect(store.schema.from).toBe(6);
      expectSameRecords(await readAll(store));
      const conversations = new ConversationStore(store.tables);
      try {
        expect(JSON.parse(JSON.stringify(await readConversations(conversations, 'sqlite')))).toEqual(
          expected.conversations.sqlite,
        );
      } finally {
        conversations.close();
      }
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL: a restored dump opens in place and reads back every record', async () => {
    await using database = await freshDatabase();
    execFileSync(
      'psql',
      ['-q', '-v', 'ON_ERROR_STOP=1', '-d', database.url, '-f', new URL('postgres.sql', FIXTURES).pathname],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const store = await openPostgresStore({ url: database.url, node: { name: 'schema-6-check' } });
    try {
      expect(store.schema.from).toBe(6);
      expectSameRecords(await readAll(store));
      const conversations = new ConversationStore(store.tables);
      expect(JSON.parse(JSON.stringify(await readConversations(conversations, 'postgres')))).toEqual(
        expected.conversations.postgres,
      );
    } finally {
      await store.close();
    }
  });
});
