import type { ServerEvent, SubscriptionTarget } from '@mci/protocol';

/**
 * True when `event` belongs to `target`, read from the event's own fields: `pid`, `ref` and
 * `streamId` (output, log, tool and intent events carry those of their process and stream; process
 * events carry `ref` and `metadata.streamId`). The server routes by the same fields
 * (see docs/protocol.md).
 */
export function eventMatches(target: SubscriptionTarget, event: ServerEvent): boolean {
  if ('all' in target) return true;
  if ('pid' in target) return 'pid' in event && event.pid === target.pid;
  if ('streamId' in target) {
    const streamId = event.type === 'process' ? event.metadata?.streamId : event.streamId;
    return streamId === target.streamId;
  }
  return event.ref === target.ref;
}

/** A stable key for a subscription target (`pid:7`, `ref:msg-1`, `stream:turn-1`, `all`). */
export function targetKey(target: SubscriptionTarget): string {
  if ('pid' in target) return `pid:${target.pid}`;
  if ('ref' in target) return `ref:${target.ref}`;
  if ('streamId' in target) return `stream:${target.streamId}`;
  return 'all';
}
