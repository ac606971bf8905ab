import { randomUUID } from 'node:crypto';
import type { StreamHost, TurnStream } from '@mci/agent';
import type { ServerEvent } from '@mci/protocol';
import type { Logger } from 'pino';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';

/**
 * The process manager as the agent loop's {@link StreamHost}, in process: streams and kills act as
 * `principal`, so a conversation's processes belong to whoever started it. `onStream` is told each
 * new stream id before any of its output is pushed (the connection subscribes to it there). The
 * streams' processes belong to `session` (opened by the caller), if given.
 */
export function managerStreamHost(
  manager: ProcessManager,
  principal: Principal,
  onStream: (streamId: string) => void,
  logger?: Logger,
  session?: string,
): StreamHost {
  return {
    openStream(options): TurnStream {
      const handle = manager.openStream(
        {
          streamId: randomUUID(),
          ...(options.ref !== undefined && { ref: options.ref }),
          ...(options.autorun === false && { autorun: false }),
          ...(session !== undefined && { session }),
        },
        principal,
      );
      const streamId = handle.streamId;
      // The loop needs this stream's intents (to count blocks and learn pids) and outputs (the
      // pictures it sends the model); the rest reaches clients through their subscriptions.
      const stop = manager.onEvent((event: ServerEvent) => {
        if ((event.type === 'intent' || event.type === 'output') && event.streamId === streamId)
          options.onEvent(event);
      });
      onStream(streamId);
      const result = handle.result.finally(stop);
      result.catch(() => {}); // the loop reads it; a failure must not also be unhandled here
      return {
        streamId,
        write(text) {
          try {
            handle.push(text);
          } catch (error) {
            // A refused chunk (the stream was ended by a cancel) is dropped; the answer is kept.
            logger?.debug({ err: error, streamId }, 'chat: chunk not pushed');
          }
        },
        async end() {
          handle.end();
        },
        stopWaiting() {
          handle.stopWaiting();
        },
        result,
      };
    },
    async signal(pid, signal) {
      return manager.signal(pid, signal, principal);
    },
  };
}
