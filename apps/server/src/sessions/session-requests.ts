import type { ClientMessage, ReplyMessage } from '@mci/protocol';
import type { Principal } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import type { Sessions } from './sessions.ts';

/** The session and state requests of the WebSocket protocol. */
export type SessionRequest = Extract<
  ClientMessage,
  { type: 'session.list' | 'session.get' | 'session.delete' | 'state.get' | 'state.set' | 'state.delete' }
>;

/**
 * Answers a `session.*` or `state.*` request of `principal` with one reply (docs/protocol.md).
 * @throws ServerError `NOT_FOUND` (another principal's session, a missing key, no sessions),
 * `VALIDATION`, `VERSION_CONFLICT`, `LIMIT_EXCEEDED`.
 */
export async function handleSessionRequest(
  request: SessionRequest,
  sessions: Sessions | undefined,
  principal: Principal,
  reply: (message: ReplyMessage) => void,
): Promise<void> {
  if (!sessions) throw new ServerError('NOT_FOUND', 'this server keeps no sessions');
  const id = request.id;
  switch (request.type) {
    case 'session.list': {
      const page = await sessions.list(
        {
          ...(request.limit !== undefined && { limit: request.limit }),
          ...(request.cursor !== undefined && { cursor: request.cursor }),
        },
        principal,
      );
      return reply({ type: 'reply', id, request: request.type, result: page });
    }
    case 'session.get': {
      const session = await sessions.get(request.session, principal);
      return reply({ type: 'reply', id, request: request.type, result: { session } });
    }
    case 'session.delete':
      await sessions.delete(request.session, principal);
      return reply({ type: 'reply', id, request: request.type, result: { session: request.session } });
    case 'state.get': {
      const entry = await sessions.getState(request.session, request.key, principal);
      return reply({ type: 'reply', id, request: request.type, result: { entry } });
    }
    case 'state.set': {
      const options = {
        ...(request.ttlMs !== undefined && { ttlMs: request.ttlMs }),
        ...(request.ifVersion !== undefined && { ifVersion: request.ifVersion }),
      };
      const result = await sessions.setState(request.session, request.key, request.value, options, principal);
      return reply({ type: 'reply', id, request: request.type, result });
    }
    case 'state.delete': {
      const result = await sessions.deleteState(request.session, request.key, principal);
      return reply({ type: 'reply', id, request: request.type, result });
    }
  }
}
