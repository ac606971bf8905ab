import type { Logger } from 'pino';
import type { ClusterMemberHost } from '../cluster/cluster-member.ts';
import type { EventLog } from './event-log.ts';
import type { LiveProcess } from './live-process.ts';
import { liveProcessOf } from './process-recovery.ts';
import type { StatsCounters } from './process-stats.ts';
import type { Scheduler } from './scheduler.ts';
import type { StreamRegistry } from './stream-registry.ts';

/** The process manager's parts and operations a {@link ClusterMemberHost} is made of. */
export interface ClusterHostParts {
  readonly logger: Logger | undefined;
  /** The manager's processes that are not idle, by pid: processes enter and leave it here too. */
  readonly live: Map<number, LiveProcess>;
  readonly stats: StatsCounters;
  readonly scheduler: Scheduler<LiveProcess>;
  readonly streams: StreamRegistry;
  readonly events: EventLog;
  /** Whether principal `owner` runs as many as a cluster-wide `maxRunning` allows. */
  capped(owner: string): boolean;
  /** Whether the manager still takes work. */
  accepting(): boolean;
  kill(live: LiveProcess): void;
  interrupt(live: LiveProcess, message: string): void;
}

/**
 * The adapter through which a node's {@link ClusterMember} works on its process manager: the live
 * processes, their counts, the run queue, the streams open here and the event listeners.
 */
export function createClusterHost(parts: ClusterHostParts): ClusterMemberHost {
  const { live: lives, stats, scheduler } = parts;
  return {
    logger: parts.logger,
    liveProcess: (pid) => lives.get(pid),
    enter: (record, run) => {
      if (lives.has(record.pid)) return undefined;
      const live = liveProcessOf(record, run);
      stats.add(record.state, record.status);
      lives.set(record.pid, live);
      return live;
    },
    release: (released) => {
      for (const live of released) {
        lives.delete(live.record.pid);
        stats.remove(live.record.state, live.record.status);
      }
    },
    enqueue: (live) => scheduler.enqueue(live.record.owner, live),
    slots: () => ({
      free: scheduler.free,
      waiting: scheduler.waiting,
      capped: scheduler.countWaiting((live) => parts.capped(live.record.owner)),
    }),
    capped: (owner) => parts.capped(owner),
    takeWaiting: (count, filter) => scheduler.takeWaiting(count, filter),
    dispatch: () => scheduler.dispatch(),
    accepting: () => parts.accepting(),
    isStreamProcess: (pid) => parts.streams.has(pid),
    kill: (live) => parts.kill(live),
    interrupt: (live, message) => parts.interrupt(live, message),
    deliver: (events) => parts.events.deliver(events),
  };
}
