import type {
  ChatCancelRequest,
  ChatDeleteRequest,
  ChatEvent,
  ChatGetRequest,
  ChatListRequest,
  ChatRenameRequest,
  ChatStartRequest,
  ReplyMessage,
} from '@mci/protocol';
import type { Principal } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import type { ChatService } from './chat-service.ts';

/** A `chat.*` request of the WebSocket protocol. */
export type ChatRequest =
  | ChatStartRequest
  | ChatCancelRequest
  | ChatListRequest
  | ChatGetRequest
  | ChatRenameRequest
  | ChatDeleteRequest;

/** What a connection lends to a chat request. */
export interface ChatRequestContext {
  chat: ChatService | undefined;
  principal: Principal;
  reply(message: ReplyMessage): void;
  /** Sends a `chat.*` turn event on the connection. */
  send(event: ChatEvent): void;
  /** Subscribes the connection to a stream of the turn. */
  subscribe(streamId: string): void;
}

/**
 * Answers one `chat.*` request for a connection (see `@mci/protocol` chat.ts for each message).
 * @throws ServerError from the chat service; `CONFLICT` when the server has no chat service.
 */
export function handleChatRequest(
  request: ChatRequest,
  context: ChatRequestContext,
): Promise<void> | undefined {
  const { chat, principal, reply } = context;
  if (!chat) throw new ServerError('CONFLICT', 'this server does not host conversations');
  const id = request.id;
  switch (request.type) {
    case 'chat.start': {
      const result = chat.start(principal, request, {
        send: context.send,
        stream: context.subscribe,
      });
      reply({ type: 'reply', id, request: request.type, result });
      return;
    }
    case 'chat.cancel': {
      const canceled = chat.cancel(principal, request.conversationId);
      reply({
        type: 'reply',
        id,
        request: request.type,
        result: { conversationId: request.conversationId, canceled },
      });
      return;
    }
    case 'chat.list':
      reply({
        type: 'reply',
        id,
        request: request.type,
        result: { conversations: chat.list(principal), models: chat.models() },
      });
      return;
    case 'chat.get':
      reply({
        type: 'reply',
        id,
        request: request.type,
        result: { ...chat.get(principal, request.conversationId), models: chat.models() },
      });
      return;
    case 'chat.rename':
      reply({
        type: 'reply',
        id,
        request: request.type,
        result: { conversation: chat.rename(principal, request.conversationId, request.title) },
      });
      return;
    case 'chat.delete':
      return chat.delete(principal, request.conversationId).then(() =>
        reply({
          type: 'reply',
          id,
          request: request.type,
          result: { conversationId: request.conversationId },
        }),
      );
  }
}
