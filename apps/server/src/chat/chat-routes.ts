import type { Hono } from 'hono';
import type { HttpEnv } from '../http/http-env.ts';
import type { ChatService } from './chat-service.ts';

/** `GET /models`: the models the server hosts conversations with (`{ models }`, never a key). */
export function registerChatRoutes(app: Hono<HttpEnv>, chat: ChatService | undefined): void {
  app.get('/models', (c) => c.json({ models: chat?.models() ?? [] }));
}
