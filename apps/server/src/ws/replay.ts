import type { ServerEvent, SubscriptionTarget } from '@mci/protocol';
import type { Principal } from '../auth/principal.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';

/** Seqs read from the store per step of a replay (at most this many events held at once). */
export const REPLAY_WINDOW = 1024;

/** Bytes of stored payload read from the store per step of a replay (one larger event is read whole). */
export const REPLAY_WINDOW_BYTES = 1024 * 1024;

/** Where a replay sends its events: one connection's socket. */
export interface ReplaySink {
  /** Whether the socket is still open. */
  open(): boolean;
  /** Whether the socket holds more unsent bytes than it should before more are sent. */
  backedUp(): boolean;
  /** Waits until the socket has sent most of its backlog; false if it closed meanwhile. */
  drained(): Promise<boolean>;
  send(event: ServerEvent): void;
  /** Called once every stored event is sent, in the same tick as the last read: follow live now. */
  follow(): void;
}

/**
 * Sends the stored events of `target` with seq > since that `principal` may see, in order, at the
 * pace the reader takes them (waiting while the socket is backed up, never dropping), then calls
 * `sink.follow()`. The log is read in windows of at most {@link REPLAY_WINDOW} seqs and
 * {@link REPLAY_WINDOW_BYTES} bytes, each a bounded read of the store, with a turn of the event loop
 * between windows so other requests are served; the next window starts after the last event read.
 * The check that every event up to the latest seq was read and the switch to live happen in one
 * tick, so nothing falls between. Exactly the
 * stored events are sent: a connection that already got some of them through another subscription
 * can drop the repeats by seq (docs/protocol.md). Resolves with how many were sent (without calling
 * `follow` when the socket closed first).
 */
export async function replayStored(
  manager: ProcessManager,
  principal: Principal,
  target: SubscriptionTarget,
  since: number,
  sink: ReplaySink,
): Promise<number> {
  const filter =
    'pid' in target ? { pid: target.pid } : 'ref' in target ? { ref: target.ref } : { all: true };
  const streamPids = new Map<number, boolean>();
  let cursor = since;
  let sent = 0;
  for (;;) {
    const last = manager.lastSeq();
    if (cursor >= last) break;
    const through = Math.min(cursor + REPLAY_WINDOW, last);
    const read = await manager.replay(
      cursor,
      { ...filter, through, maxBytes: REPLAY_WINDOW_BYTES },
      principal,
    );
    const events =
      'streamId' in target ? await streamEvents(manager, principal, read, target.streamId, streamPids) : read;
    for (const event of events) {
      if (sink.backedUp() && !(await sink.drained())) return sent;
      if (!sink.open()) return sent;
      sink.send(event);
      sent++;
    }
    cursor = read.at(-1)?.seq ?? through;
    await new Promise((resolve) => setImmediate(resolve));
    if (!sink.open()) return sent;
  }
  sink.follow();
  return sent;
}

/** The events of stream `streamId`; `pids` remembers which processes belong to it across windows. */
async function streamEvents(
  manager: ProcessManager,
  principal: Principal,
  events: ServerEvent[],
  streamId: string,
  pids: Map<number, boolean>,
): Promise<ServerEvent[]> {
  const pidOfStream = async (pid: number) => {
    let ours = pids.get(pid);
    if (ours === undefined) {
      try {
        ours = (await manager.get(pid, principal)).metadata?.streamId === streamId;
      } catch {
        // Deleted since: its events cannot belong to a live stream view.
        ours = false;
      }
      pids.set(pid, ours);
    }
    return ours;
  };
  const found: ServerEvent[] = [];
  for (const event of events) {
    let ours: boolean;
    if (event.type === 'intent' || event.type === 'stream.result') ours = event.streamId === streamId;
    else if (event.type === 'process') {
      ours = event.metadata?.streamId === streamId;
      if (ours) pids.set(event.pid, true);
    } else ours = await pidOfStream(event.pid);
    if (ours) found.push(event);
  }
  return found;
}
