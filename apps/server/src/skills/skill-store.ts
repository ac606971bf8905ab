import { type Kysely, sql } from 'kysely';
import type { CursorKey } from '../paging/cursor.ts';
import { openDatabase } from '../store/sql/sqlite-file.ts';
import type { Database, SkillVersionsTable } from '../store/sql/tables.ts';

/** One saved version of a skill. `createdAt`: ISO 8601; `createdBy`: the pid of the program that saved it. */
export interface SkillVersion {
  name: string;
  version: number;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The TypeScript module as saved. */
  code: string;
  /** The body that runs it (see `SkillHost.sources` of `@mci/sandbox`). */
  js: string;
  createdAt: string;
  createdBy?: number;
}

/** What a save stores (the version is the next one of the name). */
export type NewSkillVersion = Omit<SkillVersion, 'version' | 'createdAt'>;

/**
 * The skills of every principal in the `skills` and `skill_versions` tables of the process database
 * (schema version 13): each save adds a version, earlier ones stay readable until the skill is
 * deleted. Without a database they live in an in-memory SQLite database.
 */
export class SkillStore {
  readonly #db: Kysely<Database>;
  readonly #close: () => void;

  /** Uses the process database (`close` releases what else the store holds). */
  constructor(db: Kysely<Database>, close: () => void = () => {}) {
    this.#db = db;
    this.#close = close;
  }

  /** A store in a private in-memory SQLite database (a server without a process database). */
  static async inMemory(): Promise<SkillStore> {
    const opened = await openDatabase(':memory:');
    return new SkillStore(opened.kysely, opened.close);
  }

  /**
   * Saves the next version of `skill.name` for `owner` (1 for a new name), in one transaction: two
   * saves of one name at once get two versions.
   */
  async save(owner: string, skill: NewSkillVersion, now = Date.now()): Promise<SkillVersion> {
    return this.#db.transaction().execute(async (trx) => {
      const { latest } = await trx
        .insertInto('skills')
        .values({ owner, name: skill.name, latest: 1, created_at: now })
        .onConflict((oc) => oc.columns(['owner', 'name']).doUpdateSet({ latest: sql`skills.latest + 1` }))
        .returning('latest')
        .executeTakeFirstOrThrow();
      const row: SkillVersionsTable = {
        owner,
        name: skill.name,
        version: Number(latest),
        description: skill.description,
        input_schema: JSON.stringify(skill.inputSchema),
        code: skill.code,
        js: skill.js,
        created_at: now,
        created_by: skill.createdBy ?? null,
      };
      await trx.insertInto('skill_versions').values(row).execute();
      return toVersion(row);
    });
  }

  /** Version `version` of `owner`'s skill `name`, the latest without one; `undefined` when there is none. */
  async get(owner: string, name: string, version?: number): Promise<SkillVersion | undefined> {
    let query = this.#db
      .selectFrom('skill_versions as v')
      .innerJoin('skills as s', (join) =>
        join.onRef('s.owner', '=', 'v.owner').onRef('s.name', '=', 'v.name'),
      )
      .selectAll('v')
      .where('v.owner', '=', owner)
      .where('v.name', '=', name);
    query =
      version === undefined
        ? query.whereRef('v.version', '=', 's.latest')
        : query.where('v.version', '=', version);
    const row = await query.executeTakeFirst();
    return row && toVersion(row);
  }

  /**
   * The latest version of `owner`'s skills, newest skill first (by the time of its first version),
   * at most `limit` after the sort key `after` (`[createdAtMs, name]`); every one without `limit`.
   */
  async list(
    owner: string,
    page: { limit?: number; after?: CursorKey } = {},
  ): Promise<Array<SkillVersion & { key: [number, string] }>> {
    let query = this.#db
      .selectFrom('skills as s')
      .innerJoin('skill_versions as v', (join) =>
        join
          .onRef('v.owner', '=', 's.owner')
          .onRef('v.name', '=', 's.name')
          .onRef('v.version', '=', 's.latest'),
      )
      .selectAll('v')
      .select('s.created_at as first_at')
      .where('s.owner', '=', owner);
    if (page.after) {
      const [at, name] = page.after as [number, string];
      query = query.where((eb) =>
        eb.or([eb('s.created_at', '<', at), eb.and([eb('s.created_at', '=', at), eb('s.name', '<', name)])]),
      );
    }
    query = query.orderBy('s.created_at', 'desc').orderBy('s.name', 'desc');
    if (page.limit !== undefined) query = query.limit(page.limit);
    const rows = await query.execute();
    return rows.map((row) => ({ ...toVersion(row), key: [Number(row.first_at), row.name] }));
  }

  /** How many skills `owner` has. */
  async count(owner: string): Promise<number> {
    const row = await this.#db
      .selectFrom('skills')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner', '=', owner)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Deletes `owner`'s skill `name` with every version; false when there was none. */
  async delete(owner: string, name: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('skills')
        .where('owner', '=', owner)
        .where('name', '=', name)
        .executeTakeFirst();
      await trx.deleteFrom('skill_versions').where('owner', '=', owner).where('name', '=', name).execute();
      return Number(deleted.numDeletedRows) > 0;
    });
  }

  /** Releases an in-memory store's database (the process database is closed by its owner). */
  close(): void {
    this.#close();
  }
}

function toVersion(row: SkillVersionsTable): SkillVersion {
  return {
    name: row.name,
    version: Number(row.version),
    description: row.description,
    inputSchema: JSON.parse(row.input_schema) as Record<string, unknown>,
    code: row.code,
    js: row.js,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    ...(row.created_by !== null && { createdBy: Number(row.created_by) }),
  };
}
