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
export function handleChatRequest(request: ChatRequest, context: ChatRequestContext): Promise<void> {
  const { chat, principal, reply } = context;
  if (!chat) throw new ServerError('CONFLICT', 'this server does not host conversations');
  const id = request.id;
  switch (request.type) {
    case 'chat.start':
      return chat
        .start(principal, request, { send: context.send, stream: context.subscribe })
        .then((result) => reply({ type: 'reply', id, request: request.type, result }));
    case 'chat.cancel':
      return chat.cancel(principal, request.conversationId).then((canceled) =>
        reply({
          type: 'reply',
          id,
          request: request.type,
          result: { conversationId: request.conversationId, canceled },
        }),
      );
    case 'chat.list':
      return chat
        .list(principal, {
          ...(request.limit !== undefined && { limit: request.limit }),
          ...(request.cursor !== undefined && { cursor: request.cursor }),
        })
        .then((page) =>
          reply({
            type: 'reply',
            id,
            request: request.type,
            // `conversations` repeats the items for clients that read that key.
            result: { ...page, conversations: page.items, models: chat.models() },
          }),
        );
    case 'chat.get':
      return chat
        .get(principal, request.conversationId, {
          ...(request.limit !== undefined && { limit: request.limit }),
          ...(request.before !== undefined && { before: request.before }),
        })
        .then((found) =>
          reply({ type: 'reply', id, request: request.type, result: { ...found, models: chat.models() } }),
        );
    case 'chat.rename':
      return chat
        .rename(principal, request.conversationId, request.title)
        .then((conversation) =>
          reply({ type: 'reply', id, request: request.type, result: { conversation } }),
        );
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
