import { randomUUID } from 'node:crypto';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { ChatMessage, ChatRole, ChatUsage } from '@mci/protocol';
import { isMemoryPath, openDatabase } from '../store/open-database.ts';

/**
 * What {@link ConversationStore} needs of a connection (`?` placeholders, `BEGIN`/`COMMIT`/`ROLLBACK`
 * through `exec`): node:sqlite's `DatabaseSync`, or the Postgres store's `sqlDatabase()`.
 */
export interface ConversationDatabase {
  prepare(sql: string): {
    run(...params: SQLInputValue[]): { lastInsertRowid: number | bigint };
    get(...params: SQLInputValue[]): Record<string, unknown> | undefined;
    all(...params: SQLInputValue[]): Record<string, unknown>[];
  };
  exec(sql: string): void;
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
      this.#db = opened.db;
      this.#close = opened.close;
    } else {
      const db = new DatabaseSync(path, { timeout: 2000 });
      this.#db = db;
      this.#close = () => db.close();
    }
  }

  /** Creates a conversation owned by `owner`. */
  create(owner: string, title: string, model: string, autorun = true): ConversationRecord {
    const now = new Date().toISOString();
    const conversationId = randomUUID();
    this.#db
      .prepare(
        'INSERT INTO conversations (id, owner, title, model, created_at, updated_at, autorun) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(conversationId, owner, title, model, now, now, autorun ? 1 : 0);
    return { conversationId, owner, title, model, createdAt: now, updatedAt: now, messageCount: 0, autorun };
  }

  /** One conversation, or `undefined`. */
  get(conversationId: string): ConversationRecord | undefined {
    const row = this.#db.prepare(`${SELECT_CONVERSATION} WHERE c.id = ?`).get(conversationId);
    return row ? toRecord(row) : undefined;
  }

  /** Conversations of `owner` (every one for `undefined`), most recently updated first. */
  list(owner: string | undefined): ConversationRecord[] {
    const rows =
      owner === undefined
        ? this.#db.prepare(`${SELECT_CONVERSATION} ORDER BY c.updated_at DESC, c.id`).all()
        : this.#db
            .prepare(`${SELECT_CONVERSATION} WHERE c.owner = ? ORDER BY c.updated_at DESC, c.id`)
            .all(owner);
    return rows.map(toRecord);
  }

  rename(conversationId: string, title: string): void {
    this.#db
      .prepare('UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?')
      .run(title, new Date().toISOString(), conversationId);
  }

  /** Notes the model of the latest turn. */
  setModel(conversationId: string, model: string): void {
    this.#db.prepare('UPDATE conversations SET model = ? WHERE id = ?').run(model, conversationId);
  }

  /** Sets whether the conversation's blocks run as written or wait for a `run` signal. */
  setAutorun(conversationId: string, autorun: boolean): void {
    this.#db
      .prepare('UPDATE conversations SET autorun = ? WHERE id = ?')
      .run(autorun ? 1 : 0, conversationId);
  }

  /** Deletes a conversation with its messages. */
  delete(conversationId: string): void {
    this.#db.exec('BEGIN');
    try {
      this.#db.prepare('DELETE FROM chat_messages WHERE conversation_id = ?').run(conversationId);
      this.#db.prepare('DELETE FROM conversations WHERE id = ?').run(conversationId);
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Stores a message (and touches its conversation); returns it as the wire shows it. */
  addMessage(message: NewChatMessage): ChatMessage {
    const now = new Date().toISOString();
    const pids = [...(message.pids ?? [])];
    const { lastInsertRowid } = this.#db
      .prepare(
        `INSERT INTO chat_messages (conversation_id, role, text, model, step, pids, input_tokens, output_tokens, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        message.conversationId,
        message.role,
        message.text,
        message.model ?? null,
        message.step ?? null,
        JSON.stringify(pids),
        message.usage?.inputTokens ?? null,
        message.usage?.outputTokens ?? null,
        now,
      );
    this.#db.prepare('UPDATE conversations SET updated_at = ? WHERE id = ?').run(now, message.conversationId);
    return {
      id: Number(lastInsertRowid),
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
  messages(conversationId: string): ChatMessage[] {
    return this.#db
      .prepare('SELECT * FROM chat_messages WHERE conversation_id = ? ORDER BY id')
      .all(conversationId)
      .map(toMessage);
  }

  close(): void {
    this.#close();
  }
}

const SELECT_CONVERSATION = `SELECT c.*, (SELECT COUNT(*) FROM chat_messages m WHERE m.conversation_id = c.id) AS message_count
  FROM conversations c`;

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
