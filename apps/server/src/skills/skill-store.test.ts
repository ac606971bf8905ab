import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../test/support/postgres.ts';
import { openPostgresStore } from '../store/sql/open-postgres.ts';
import { openSqliteStore } from '../store/sql/open-sqlite.ts';
import { SkillStore } from './skill-store.ts';

// The skill store on both engines: the same answers from SQLite and PostgreSQL.

const engines = [
  {
    name: 'SQLite',
    async open() {
      const store = await openSqliteStore({ path: ':memory:' });
      return { skills: new SkillStore(store.tables.db), close: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const database = await freshDatabase();
      const store = await openPostgresStore({ url: database.url });
      return {
        skills: new SkillStore(store.tables.db),
        close: async () => {
          await store.close();
          await database[Symbol.asyncDispose]();
        },
      };
    },
  },
];

const skill = (name: string, code = 'export default async () => 1;') => ({
  name,
  description: `${name}.`,
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  code,
  js: 'exports.default = async () => 1;',
});

describe.each(engines)('SkillStore on $name', (engine) => {
  it('numbers versions per owner and name, keeps the earlier ones, and deletes them all', async () => {
    const { skills, close } = await engine.open();
    try {
      expect(await skills.save('alice', skill('a', 'v1'), 1000)).toMatchObject({ version: 1, code: 'v1' });
      expect(await skills.save('alice', { ...skill('a', 'v2'), createdBy: 7 }, 2000)).toMatchObject({
        version: 2,
        createdBy: 7,
        createdAt: new Date(2000).toISOString(),
      });
      expect(await skills.save('bob', skill('a', 'b1'))).toMatchObject({ version: 1 });
      expect(await skills.get('alice', 'a')).toMatchObject({
        version: 2,
        code: 'v2',
        inputSchema: skill('a').inputSchema,
      });
      expect(await skills.get('alice', 'a', 1)).toMatchObject({ version: 1, code: 'v1' });
      expect(await skills.get('alice', 'a', 3)).toBeUndefined();
      expect(await skills.get('carol', 'a')).toBeUndefined();
      expect(await skills.delete('alice', 'a')).toBe(true);
      expect(await skills.delete('alice', 'a')).toBe(false);
      expect(await skills.get('alice', 'a', 1)).toBeUndefined();
      expect(await skills.get('bob', 'a')).toMatchObject({ code: 'b1' });
    } finally {
      await close();
    }
  });

  it('gives concurrent saves of one name distinct versions', async () => {
    const { skills, close } = await engine.open();
    try {
      const saved = await Promise.all(
        Array.from({ length: 10 }, (_, i) => skills.save('alice', skill('x', `v${i}`))),
      );
      expect(saved.map((s) => s.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await skills.get('alice', 'x'))?.version).toBe(10);
    } finally {
      await close();
    }
  });

  it('pages the latest versions newest skill first, each once while more are saved', async () => {
    const { skills, close } = await engine.open();
    try {
      for (let i = 0; i < 12; i++) await skills.save('alice', skill(`s${i}`), 1000 + (i % 4));
      await skills.save('bob', skill('other'));
      const seen: string[] = [];
      let after: [number, string] | undefined;
      let added = 0;
      for (;;) {
        const rows = await skills.list('alice', { limit: 5, ...(after && { after }) });
        seen.push(...rows.map((row) => row.name));
        // Skills saved meanwhile are newer than the cursor: never repeated or skipped.
        await skills.save('alice', skill(`new${added++}`), 9000 + added);
        if (rows.length < 5) break;
        after = rows.at(-1)!.key;
      }
      expect(seen.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `s${i}`).sort());
      expect(await skills.count('alice')).toBe(12 + added);
    } finally {
      await close();
    }
  });
});
