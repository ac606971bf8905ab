/** A value bound to a Postgres statement parameter (`$1`, `$2`, ...). */
export type PgParam = string | number | null | Uint8Array;

/** One statement of a transaction or a read. */
export interface PgStatement {
  sql: string;
  params: PgParam[];
}

/** What the main thread asks the Postgres worker (see pg-worker.ts). */
export type PgRequest =
  | { kind: 'tx'; id: number; statements: PgStatement[]; reply: boolean }
  | { kind: 'query'; id: number; statements: PgStatement[]; reply: true }
  | { kind: 'lock'; id: number; key: number; reply: true }
  | { kind: 'lease'; id: number; name: string; leaseMs: number; renewMs: number; reply: true }
  | { kind: 'listen'; id: number; node: string; reply: true }
  | { kind: 'close'; id: number; reply: true };

/** The worker's answer: the rows of each statement, or the error's message and SQLSTATE code. */
export type PgReply =
  | { id: number; rows: Array<Array<Record<string, unknown>>> }
  | { id: number; error: { message: string; code?: string } };

/**
 * What the worker reports on its own: a batch acknowledged, or lost after its retries, or the
 * database lock lost (its connection dropped and another server took the lock meanwhile), leases of
 * other nodes ended because they expired (with the processes this node took over from them, as
 * `[pid, node]` pairs), this node's lease ended by another node, and, once listening (cluster mode),
 * the processes queued on other nodes (at each renewal), rows of the event log committed by any node
 * (in position order), a node with more queued processes
 * than free slots (`surplus`), and requests to this node: kill a process, an `offer` of free slots
 * from another node, processes handed over to this node (`take`).
 */
export type PgNotice =
  | { ack: number }
  | { lost: number; error: string; writes: number }
  | { lockLost: string }
  | { nodesExpired: string[]; adopted: Array<[number, string]> }
  | { leaseLost: string }
  | { events: Array<Record<string, unknown>> }
  | { kill: number }
  | { queuedElsewhere: number }
  | { surplus: string }
  | { offer: { node: string; slots: number } }
  | { take: number[] };
