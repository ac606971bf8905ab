import type { ServerEvent, SubscriptionTarget } from '@mci/protocol';

/** Most processes and streams remembered (oldest forgotten first). */
const MAX_ENTRIES = 50_000;

/**
 * What the client has learned about which process belongs to which ref and stream, from `process`
 * and `intent` events, so it can tell which local subscription an `output`, `log` or `tool` event
 * (which carry only a pid) belongs to. Mirrors the server's routing (see docs/protocol.md).
 */
export class RouteBook {
  readonly #refOfPid = new Map<number, string>();
  readonly #streamOfPid = new Map<number, string>();
  readonly #refOfStream = new Map<string, string>();

  /** Notes a stream this client opened, so its rejected intents reach `ref` subscriptions too. */
  noteStream(streamId: string, ref: string | undefined): void {
    if (ref !== undefined) remember(this.#refOfStream, streamId, ref);
  }

  learn(event: ServerEvent): void {
    if (event.type === 'process') {
      const streamId = event.metadata?.streamId;
      if (event.ref !== undefined) remember(this.#refOfPid, event.pid, event.ref);
      if (streamId !== undefined) {
        remember(this.#streamOfPid, event.pid, streamId);
        if (event.ref !== undefined) remember(this.#refOfStream, streamId, event.ref);
      }
    } else if (event.type === 'intent' && event.pid !== undefined) {
      remember(this.#streamOfPid, event.pid, event.streamId);
    } else if (event.type === 'stream.result' && event.ref !== undefined) {
      remember(this.#refOfStream, event.streamId, event.ref);
    }
  }

  /** True when `event` belongs to `target` (call {@link learn} with the event first). */
  matches(target: SubscriptionTarget, event: ServerEvent): boolean {
    if ('all' in target) return true;
    if ('pid' in target) return 'pid' in event && event.pid === target.pid;
    if ('streamId' in target) {
      switch (event.type) {
        case 'intent':
        case 'stream.result':
          return event.streamId === target.streamId;
        case 'process':
          return event.metadata?.streamId === target.streamId;
        default:
          return this.#streamOfPid.get(event.pid) === target.streamId;
      }
    }
    switch (event.type) {
      case 'process':
      case 'stream.result':
        return event.ref === target.ref;
      case 'intent':
        return (
          this.#refOfStream.get(event.streamId) === target.ref ||
          (event.pid !== undefined && this.#refOfPid.get(event.pid) === target.ref)
        );
      default:
        return this.#refOfPid.get(event.pid) === target.ref;
    }
  }
}

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

/** A stable key for a subscription target (`pid:7`, `ref:msg-1`, `stream:turn-1`, `all`). */
export function targetKey(target: SubscriptionTarget): string {
  if ('pid' in target) return `pid:${target.pid}`;
  if ('ref' in target) return `ref:${target.ref}`;
  if ('streamId' in target) return `stream:${target.streamId}`;
  return 'all';
}
