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
  | { kind: 'lock'; id: number; key: number; shared: boolean; reply: true }
  | {
      kind: 'lease';
      id: number;
      name: string;
      leaseMs: number;
      renewMs: number;
      /** Report the other nodes' queues at each renewal. */
      cluster: boolean;
      reply: true;
    }
  | { kind: 'listen'; id: number; node: string; reply: true }
  | { kind: 'close'; id: number; reply: true };

/** The worker's answer: the rows of each statement, or the error's message and SQLSTATE code. */
export type PgReply =
  | { id: number; rows: Array<Array<Record<string, unknown>>> }
  | { id: number; error: { message: string; code?: string } };

/**
 * What the worker reports for a cluster: rows of the event log committed by any node (in position
 * order), the processes this node took over from stopped nodes (`[pid, node]`), the processes queued
 * on other nodes (at each lease renewal), a node with more queued processes than free slots
 * (`surplus`), and requests to this node: kill a process, an `offer` of free slots from another node,
 * processes handed over to it (`take`).
 */
export type ClusterMessage =
  | { type: 'events'; rows: Array<Record<string, unknown>> }
  | { type: 'adopted'; adopted: Array<[number, string]> }
  | { type: 'queuedElsewhere'; count: number }
  | { type: 'surplus'; node: string }
  | { type: 'kill'; pid: number }
  | { type: 'offer'; node: string; slots: number }
  | { type: 'take'; pids: number[] };

/**
 * What the worker reports: the answer to a request, a batch acknowledged, batches failing on connection
 * errors and retried (`retrying`: the error, `null` once one commits again), a batch lost to an SQL
 * error, the
 * database lock lost (its connection dropped and another server took the lock meanwhile), leases of
 * other nodes ended because they expired (with how many processes this node took over), this node's
 * lease ended by another node, and messages for a cluster.
 */
export type PgNotice =
  | { reply: PgReply }
  | { ack: number }
  | { retrying: string | null }
  | { lost: number; error: string; writes: number }
  | { lockLost: string }
  | { nodesExpired: string[]; adopted: number }
  | { leaseLost: string }
  | { cluster: ClusterMessage };
