import type { ServerEvent, SubscriptionTarget } from '@mci/protocol';
import type { EventRoute } from '../processes/process-store.ts';

/**
 * What one connection follows: processes (its own creations and explicit `pid` subscriptions), refs,
 * streams, or everything. Processes created by a followed stream are followed too (their output and log
 * events route by pid).
 */
export class Subscriptions {
  readonly pids = new Set<number>();
  readonly refs = new Set<string>();
  readonly streams = new Set<string>();
  all = false;

  add(target: SubscriptionTarget): void {
    if ('pid' in target) this.pids.add(target.pid);
    else if ('ref' in target) this.refs.add(target.ref);
    else if ('streamId' in target) this.streams.add(target.streamId);
    else this.all = true;
  }

  /** Whether `target` is followed. */
  has(target: SubscriptionTarget): boolean {
    if ('pid' in target) return this.pids.has(target.pid);
    if ('ref' in target) return this.refs.has(target.ref);
    if ('streamId' in target) return this.streams.has(target.streamId);
    return this.all;
  }

  remove(target: SubscriptionTarget): void {
    if ('pid' in target) this.pids.delete(target.pid);
    else if ('ref' in target) this.refs.delete(target.ref);
    else if ('streamId' in target) this.streams.delete(target.streamId);
    else this.all = false;
  }

  /** True when the event (with its route) belongs to a followed target. */
  matches(event: ServerEvent, route: EventRoute): boolean {
    if (this.all) return true;
    if (route.pid !== undefined && this.pids.has(route.pid)) return true;
    if (route.ref !== undefined && this.refs.has(route.ref)) return true;
    const streamId = route.streamId ?? streamOf(event);
    return streamId !== undefined && this.streams.has(streamId);
  }

  /** Notes processes a followed stream created, so their output/log events follow. */
  learn(event: ServerEvent): void {
    if (event.type === 'process') {
      const streamId = event.metadata?.streamId;
      if (streamId !== undefined && this.streams.has(streamId)) this.pids.add(event.pid);
    } else if (event.type === 'intent' && event.pid !== undefined && this.streams.has(event.streamId)) {
      this.pids.add(event.pid);
    }
  }

  /** Every followed target, for an `overflow` notice. */
  list(): SubscriptionTarget[] {
    if (this.all) return [{ all: true }];
    return [
      ...[...this.streams].map((streamId) => ({ streamId })),
      ...[...this.refs].map((ref) => ({ ref })),
      ...[...this.pids].map((pid) => ({ pid })),
    ];
  }

  clear(): void {
    this.pids.clear();
    this.refs.clear();
    this.streams.clear();
    this.all = false;
  }
}

/** The stream an event belongs to, when the event itself says. */
export function streamOf(event: ServerEvent): string | undefined {
  if (event.type === 'intent' || event.type === 'stream.result') return event.streamId;
  if (event.type === 'process') return event.metadata?.streamId;
  return undefined;
}
