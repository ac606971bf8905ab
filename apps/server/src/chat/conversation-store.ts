import { randomUUID } from 'node:crypto';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { ChatMessage, ChatRole, ChatUsage } from '@mci/protocol';
import { isMemoryPath, openDatabase } from '../store/open-database.ts';

/** A row as a database answers it. */
type Row = Record<string, unknown>;

/**
 * What {@link ConversationStore} needs of a database (`?` placeholders): the SQLite connection of
 * {@link sqliteConversations}, or the Postgres store's `conversationDatabase()`, which runs its
 * statements after the process store's pending writes.
 */
export interface ConversationDatabase {
  /** The rows of one statement (an `INSERT ... RETURNING` answers its rows too). */
  query(sql: string, params: SQLInputValue[]): Promise<Row[]>;
  /** Runs `statements` in one transaction. */
  transaction(statements: Array<{ sql: string; params: SQLInputValue[] }>): Promise<void>;
}

/** A {@link ConversationDatabase} over a node:sqlite connection (statements run at once). */
export function sqliteConversations(db: DatabaseSync): ConversationDatabase {
  return {
    async query(sql, params) {
      return db.prepare(sql).all(...params);
    },
    async transaction(statements) {
      db.exec('BEGIN');
      try {
        for (const { sql, params } of statements) db.prepare(sql).run(...params);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
  };
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
 * database (schema versions 2 and 3), so they survive restarts. Writes are immediate (one row per message:
 * a few per model answer). Without a database file they live in an in-memory SQLite database.
 */
export class ConversationStore {
  readonly #db: ConversationDatabase;
  readonly #close: () => void;

  /**
   * Opens the tables in the migrated process database at `path` (a second connection beside the
   * process store's, which took the lock and applied the migrations), or a private in-memory one;
   * or uses `path` as the connection when it is one (the Postgres store's, which it keeps open).
   */
  constructor(path: string | ConversationDatabase | undefined) {
    if (typeof path === 'object') {
      this.#db = path;
      this.#close = () => {};
    } else if (path === undefined || isMemoryPath(path)) {
      const opened = openDatabase(':memory:');
      this.#db = sqliteConversations(opened.db);
      this.#close = opened.close;
    } else {
      const db = new DatabaseSync(path, { timeout: 2000 });
      this.#db = sqliteConversations(db);
      this.#close = () => db.close();
    }
  }

  /** Creates a conversation owned by `owner`. */
  async create(owner: string, title: string, model: string, autorun = true): Promise<ConversationRecord> {
    const now = new Date().toISOString();
    const conversationId = randomUUID();
    await this.#db.query(
      'INSERT INTO conversations (id, owner, title, model, created_at, updated_at, autorun) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [conversationId, owner, title, model, now, now, autorun ? 1 : 0],
    );
    return { conversationId, owner, title, model, createdAt: now, updatedAt: now, messageCount: 0, autorun };
  }

  /** One conversation, or `undefined`. */
  async get(conversationId: string): Promise<ConversationRecord | undefined> {
    const [row] = await this.#db.query(`${SELECT_CONVERSATION} WHERE c.id = ?`, [conversationId]);
    return row ? toRecord(row) : undefined;
  }

  /** Conversations of `owner` (every one for `undefined`), most recently updated first. */
  async list(owner: string | undefined): Promise<ConversationRecord[]> {
    const rows =
      owner === undefined
        ? await this.#db.query(`${SELECT_CONVERSATION} ORDER BY c.updated_at DESC, c.id`, [])
        : await this.#db.query(`${SELECT_CONVERSATION} WHERE c.owner = ? ORDER BY c.updated_at DESC, c.id`, [
            owner,
          ]);
    return rows.map(toRecord);
  }

  async rename(conversationId: string, title: string): Promise<void> {
    await this.#db.query('UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?', [
      title,
      new Date().toISOString(),
      conversationId,
    ]);
  }

  /** Notes the model of the latest turn. */
  async setModel(conversationId: string, model: string): Promise<void> {
    await this.#db.query('UPDATE conversations SET model = ? WHERE id = ?', [model, conversationId]);
  }

  /** Sets whether the conversation's blocks run as written or wait for a `run` signal. */
  async setAutorun(conversationId: string, autorun: boolean): Promise<void> {
    await this.#db.query('UPDATE conversations SET autorun = ? WHERE id = ?', [autorun ? 1 : 0, conversationId]);
  }

  /** Deletes a conversation with its messages. */
  async delete(conversationId: string): Promise<void> {
    await this.#db.transaction([
      { sql: 'DELETE FROM chat_messages WHERE conversation_id = ?', params: [conversationId] },
      { sql: 'DELETE FROM conversations WHERE id = ?', params: [conversationId] },
    ]);
  }

  /** Stores a message (and touches its conversation); returns it as the wire shows it. */
  async addMessage(message: NewChatMessage): Promise<ChatMessage> {
    const now = new Date().toISOString();
    const pids = [...(message.pids ?? [])];
    const [inserted] = await this.#db.query(
      `INSERT INTO chat_messages (conversation_id, role, text, model, step, pids, input_tokens, output_tokens, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
        message.conversationId,
        message.role,
        message.text,
        message.model ?? null,
        message.step ?? null,
        JSON.stringify(pids),
        message.usage?.inputTokens ?? null,
        message.usage?.outputTokens ?? null,
        now,
      ],
    );
    await this.#db.query('UPDATE conversations SET updated_at = ? WHERE id = ?', [now, message.conversationId]);
    return {
      id: Number(inserted?.id),
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

  /** The messages of a conversation, in order. */
  async messages(conversationId: string): Promise<ChatMessage[]> {
    const rows = await this.#db.query('SELECT * FROM chat_messages WHERE conversation_id = ? ORDER BY id', [
      conversationId,
    ]);
    return rows.map(toMessage);
  }

  close(): void {
    this.#close();
  }
}

const SELECT_CONVERSATION = `SELECT c.*, (SELECT COUNT(*) FROM chat_messages m WHERE m.conversation_id = c.id) AS message_count
  FROM conversations c`;

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
