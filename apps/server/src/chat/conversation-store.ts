import { randomUUID } from 'node:crypto';
import type { ChatMessage, ChatRole, ChatUsage } from '@mci/protocol';
import type { Kysely } from 'kysely';
import { openDatabase } from '../store/sql/sqlite-file.ts';
import type { Database } from '../store/sql/tables.ts';

/**
 * The tables of the process database that conversations live in: a Kysely connection to it, and
 * `afterWrites`, which resolves once the process store's pending writes are committed (a message
 * refers to processes by pid). The SQL store's `tables`.
 */
export interface ConversationTables {
  db: Kysely<Database>;
  afterWrites(): Promise<void>;
}

/** A stored conversation (its summary fields but `messageCount` and `running`). */
export interface ConversationRecord {
  conversationId: string;
  owner: string;
  title: string;
  model: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  /** Blocks run as written (`true`) or wait for a `run` signal (`false`). */
  autorun: boolean;
}

/** A message to store. */
export interface NewChatMessage {
  conversationId: string;
  role: ChatRole;
  text: string;
  model?: string;
  step?: number;
  pids?: readonly number[];
  usage?: ChatUsage;
}

/**
 * Conversations and their messages in the `conversations` and `chat_messages` tables of the process
 * database (schema versions 2 and 3), so they survive restarts. Writes are immediate (one row per
 * message: a few per model answer). Without a database they live in an in-memory SQLite database.
 */
export class ConversationStore {
  readonly #db: Kysely<Database>;
  readonly #afterWrites: () => Promise<void>;
  readonly #close: () => void;

  /** Uses the process database's `tables` (`close` releases what else the store holds). */
  constructor(tables: ConversationTables, close: () => void = () => {}) {
    this.#db = tables.db;
    this.#afterWrites = tables.afterWrites;
    this.#close = close;
  }

  /** A store in a private in-memory SQLite database (a server without a process database). */
  static async inMemory(): Promise<ConversationStore> {
    const opened = await openDatabase(':memory:');
    return new ConversationStore({ db: opened.kysely, afterWrites: async () => {} }, opened.close);
  }

  /** Creates a conversation owned by `owner`. */
  async create(owner: string, title: string, model: string, autorun = true): Promise<ConversationRecord> {
    const now = new Date().toISOString();
    const conversationId = randomUUID();
    await this.#db
      .insertInto('conversations')
      .values({
        id: conversationId,
        owner,
        title,
        model,
        created_at: now,
        updated_at: now,
        autorun: autorun ? 1 : 0,
      })
      .execute();
    return { conversationId, owner, title, model, createdAt: now, updatedAt: now, messageCount: 0, autorun };
  }

  /** One conversation, or `undefined`. */
  async get(conversationId: string): Promise<ConversationRecord | undefined> {
    const row = await this.#selectConversations().where('c.id', '=', conversationId).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /**
   * Conversations of `owner` (every one for `undefined`), newest (created last) first, by
   * `(createdAt, conversationId)` descending: at most `limit`, those after `before` (the key of the
   * last conversation of the page before) when given.
   */
  async list(
    owner: string | undefined,
    page: { limit?: number; before?: readonly [createdAt: string, conversationId: string] } = {},
  ): Promise<ConversationRecord[]> {
    let query = this.#selectConversations();
    if (owner !== undefined) query = query.where('c.owner', '=', owner);
    const before = page.before;
    if (before !== undefined)
      query = query.where((eb) =>
        eb.or([
          eb('c.created_at', '<', before[0]),
          eb.and([eb('c.created_at', '=', before[0]), eb('c.id', '<', before[1])]),
        ]),
      );
    query = query.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc');
    if (page.limit !== undefined) query = query.limit(page.limit);
    return (await query.execute()).map(toRecord);
  }

  async rename(conversationId: string, title: string): Promise<void> {
    await this.#db
      .updateTable('conversations')
      .set({ title, updated_at: new Date().toISOString() })
      .where('id', '=', conversationId)
      .execute();
  }

  /** Notes the model of the latest turn. */
  async setModel(conversationId: string, model: string): Promise<void> {
    await this.#db.updateTable('conversations').set({ model }).where('id', '=', conversationId).execute();
  }

  /** Sets whether the conversation's blocks run as written or wait for a `run` signal. */
  async setAutorun(conversationId: string, autorun: boolean): Promise<void> {
    await this.#db
      .updateTable('conversations')
      .set({ autorun: autorun ? 1 : 0 })
      .where('id', '=', conversationId)
      .execute();
  }

  /** Deletes a conversation with its messages. */
  async delete(conversationId: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('chat_messages').where('conversation_id', '=', conversationId).execute();
      await trx.deleteFrom('conversations').where('id', '=', conversationId).execute();
    });
  }

  /** Stores a message (and touches its conversation); returns it as the wire shows it. */
  async addMessage(message: NewChatMessage): Promise<ChatMessage> {
    const now = new Date().toISOString();
    const pids = [...(message.pids ?? [])];
    if (pids.length > 0) await this.#afterWrites();
    const inserted = await this.#db
      .insertInto('chat_messages')
      .values({
        conversation_id: message.conversationId,
        role: message.role,
        text: message.text,
        model: message.model ?? null,
        step: message.step ?? null,
        pids: JSON.stringify(pids),
        input_tokens: message.usage?.inputTokens ?? null,
        output_tokens: message.usage?.outputTokens ?? null,
        created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await this.#db
      .updateTable('conversations')
      .set({ updated_at: now })
      .where('id', '=', message.conversationId)
      .execute();
    return {
      id: Number(inserted.id),
      conversationId: message.conversationId,
      role: message.role,
      text: message.text,
      ...(message.model !== undefined && { model: message.model }),
      ...(message.step !== undefined && { step: message.step }),
      pids,
      ...(message.usage !== undefined && { usage: message.usage }),
      createdAt: now,
    };
  }

  /**
   * A page of a conversation's messages, in order: the newest ones before message id `before` (all
   * when absent), at most `limit` of them and at most `maxBytes` of text (UTF-16 code units; the
   * newest message is always taken whole). `nextCursor` is the `before` of the page older than this one,
   * absent when there is none.
   */
  async page(
    conversationId: string,
    options: { limit: number; before?: number; maxBytes: number },
  ): Promise<{ messages: ChatMessage[]; nextCursor?: number }> {
    // Sizes first (no text read), newest first: then only the rows that fit are read.
    let sized = this.#db
      .selectFrom('chat_messages')
      .select((eb) => ['id', eb.fn<number>('length', ['text']).as('size')])
      .where('conversation_id', '=', conversationId)
      .orderBy('id', 'desc')
      .limit(options.limit + 1);
    if (options.before !== undefined) sized = sized.where('id', '<', options.before);
    const candidates = await sized.execute();
    const chosen: number[] = [];
    let bytes = 0;
    for (const { id, size } of candidates.slice(0, options.limit)) {
      if (chosen.length > 0 && bytes + Number(size) > options.maxBytes) break;
      chosen.push(Number(id));
      bytes += Number(size);
    }
    if (chosen.length === 0) return { messages: [] };
    const rows = await this.#db
      .selectFrom('chat_messages')
      .selectAll()
      .where('id', 'in', chosen)
      .orderBy('id')
      .execute();
    const oldest = chosen.at(-1)!;
    return {
      messages: rows.map(toMessage),
      ...(candidates.length > chosen.length && { nextCursor: oldest }),
    };
  }

  /** Text bytes (UTF-16 code units) of the messages of `owner`'s conversations, by conversation. */
  async sizes(
    owner?: string,
  ): Promise<Array<{ conversationId: string; owner: string; updatedAt: string; bytes: number }>> {
    let query = this.#db
      .selectFrom('conversations as c')
      .leftJoin('chat_messages as m', 'm.conversation_id', 'c.id')
      .select((eb) => [
        'c.id as id',
        'c.owner as owner',
        'c.updated_at as updated_at',
        eb.fn.coalesce(eb.fn.sum<number>(eb.fn('length', ['m.text'])), eb.val(0)).as('bytes'),
      ])
      .groupBy(['c.id', 'c.owner', 'c.updated_at']);
    if (owner !== undefined) query = query.where('c.owner', '=', owner);
    const rows = await query.execute();
    return rows.map((row) => ({
      conversationId: String(row.id),
      owner: String(row.owner),
      updatedAt: String(row.updated_at),
      bytes: Number(row.bytes),
    }));
  }

  /** The messages of a conversation, in order. */
  async messages(conversationId: string): Promise<ChatMessage[]> {
    const rows = await this.#db
      .selectFrom('chat_messages')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .orderBy('id')
      .execute();
    return rows.map(toMessage);
  }

  close(): void {
    this.#close();
  }

  #selectConversations() {
    return this.#db
      .selectFrom('conversations as c')
      .selectAll('c')
      .select((eb) =>
        eb
          .selectFrom('chat_messages as m')
          .select((m) => m.fn.countAll<number>().as('n'))
          .whereRef('m.conversation_id', '=', 'c.id')
          .as('message_count'),
      );
  }
}

type Row = Record<string, unknown>;

function toRecord(row: Row): ConversationRecord {
  return {
    conversationId: String(row.id),
    owner: String(row.owner),
    title: String(row.title),
    model: String(row.model),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    messageCount: Number(row.message_count),
    autorun: Number(row.autorun) !== 0,
  };
}

function toMessage(row: Row): ChatMessage {
  return {
    id: Number(row.id),
    conversationId: String(row.conversation_id),
    role: row.role as ChatRole,
    text: String(row.text),
    ...(row.model !== null && { model: String(row.model) }),
    ...(row.step !== null && { step: Number(row.step) }),
    pids: JSON.parse(String(row.pids)) as number[],
    ...(row.input_tokens !== null && {
      usage: { inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) },
    }),
    createdAt: String(row.created_at),
  };
}
