import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../test/support/postgres.ts';
import { openPostgresStore } from '../store/sql/open-postgres.ts';
import { openSqliteStore } from '../store/sql/open-sqlite.ts';
import { SessionStore } from './session-store.ts';

// The session store on both engines: the same answers from SQLite and PostgreSQL.

const LIMITS = { valueBytes: 20, sessionBytes: 30 };

const engines = [
  {
    name: 'SQLite',
    async open() {
      const store = await openSqliteStore({ path: ':memory:' });
      return { sessions: new SessionStore(store.tables.db, 'sqlite', LIMITS), close: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const database = await freshDatabase();
      const store = await openPostgresStore({ url: database.url });
      return {
        sessions: new SessionStore(store.tables.db, 'postgres', LIMITS),
        close: async () => {
          await store.close();
          await database[Symbol.asyncDispose]();
        },
      };
    },
  },
];

describe.each(engines)('SessionStore on $name', (engine) => {
  it('pages sessions newest first, each once while more are created', async () => {
    const { sessions, close } = await engine.open();
    try {
      for (let i = 0; i < 25; i++) await sessions.open(`s${i}`, 'alice', 1000 + (i % 5));
      await sessions.open('other', 'bob', 5000);
      const seen: string[] = [];
      let cursor: string | undefined;
      let added = 0;
      do {
        const page = await sessions.list('alice', { limit: 7, ...(cursor !== undefined && { cursor }) });
        seen.push(...page.items.map((session) => session.id));
        // Newer sessions created meanwhile come before the cursor: never repeated or skipped.
        await sessions.open(`new${added++}`, 'alice', 9000 + added);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(seen).toHaveLength(25);
      expect(new Set(seen).size).toBe(25);
      expect(seen.slice(0, 5).sort()).toEqual(['s14', 's19', 's24', 's4', 's9']);
      await expect(sessions.open('s1', 'bob')).rejects.toMatchObject({ code: 'CONFLICT', path: 'session' });
      await expect(sessions.list('alice', { cursor: 'nope' })).rejects.toMatchObject({ code: 'VALIDATION' });
    } finally {
      await close();
    }
  });

  it('counts versions, checks them and the byte limits in one transaction, and sweeps', async () => {
    const { sessions, close } = await engine.open();
    try {
      await sessions.open('a', 'alice', 0);
      expect(await sessions.write('a', 'k', '"12345"', { ifVersion: 0 })).toEqual({ version: 1 });
      await expect(sessions.write('a', 'k', '1', { ifVersion: 0 })).rejects.toMatchObject({
        code: 'VERSION_CONFLICT',
      });
      await expect(sessions.write('a', 'big', `"${'x'.repeat(30)}"`)).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
      });
      await sessions.write('a', 'j', `"${'x'.repeat(16)}"`);
      // 7 + 18 bytes are stored: another 18 would pass the session's 30.
      await expect(sessions.write('a', 'm', `"${'x'.repeat(16)}"`)).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
      });
      expect(await sessions.remove('a', 'k')).toBe(true);
      expect(await sessions.read('a', 'k')).toBeUndefined();
      // The version keeps counting over a delete: a compare-and-set read before it fails.
      expect(await sessions.write('a', 'k', '2', { ifVersion: 0 })).toEqual({ version: 2 });
      await sessions.write('a', 'ttl', '1', { ttlMs: 10 }, 0);
      await sessions.write('pid:7', 'own', '1');
      expect((await sessions.entries('a')).map((entry) => entry.key)).toEqual(['j', 'k']);
      expect(await sessions.sweep(Date.now(), Date.now() + 1)).toBe(1);
      expect(await sessions.get('a')).toBeUndefined();
      expect(await sessions.entries('a')).toEqual([]);
      expect(await sessions.entries('pid:7')).toEqual([]);
    } finally {
      await close();
    }
  });
});
