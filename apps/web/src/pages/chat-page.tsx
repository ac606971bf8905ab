import type { ChatMessage } from '@mci/client';
import { useEffect, useRef, useState } from 'react';
import { useLocation } from 'wouter';
import { chatStoreOf, type LiveStep } from '../chat/chat-store.ts';
import { Composer } from '../chat/composer.tsx';
import { ConversationList } from '../chat/conversation-list.tsx';
import { ConversationState } from '../chat/conversation-state.tsx';
import { MessageView } from '../chat/message-view.tsx';
import { useConversation, useConversations } from '../chat/use-chat.ts';
import { ErrorText } from '../components/error-text.tsx';
import { useClient } from '../connection/connection-context.ts';
import { useFollowTail } from '../hooks/use-follow-tail.ts';

/** A step still being written, shown as the assistant message it becomes. */
function liveMessage(step: LiveStep): ChatMessage {
  return {
    id: 0,
    conversationId: '',
    role: 'assistant',
    text: step.text,
    step: step.step,
    pids: [],
    createdAt: '',
  };
}

/**
 * Conversations with a model hosted by the server: the list, the messages (answers stream in as
 * markdown, each exec block with its live process card), the composer with the model picker, the
 * run-mode switch (off: each block waits for its card's Run button) and Stop; beside them, the
 * conversation's session state.
 */
export function ChatPage({ conversationId }: { conversationId?: string }) {
  const client = useClient();
  const store = chatStoreOf(client);
  const [, navigate] = useLocation();
  const { conversation, messages, turn, error, loadEarlier } = useConversation(conversationId);
  const {
    conversations,
    models,
    error: listError,
    reload,
  } = useConversations(`${conversationId}:${turn.running}`);
  const [model, setModel] = useState<string>();
  const [autorun, setAutorun] = useState(true);
  // The page follows the answer as it streams; an opened conversation starts at its end.
  const messagesBox = useRef<HTMLDivElement>(null);
  useFollowTail(messagesBox, 'page', conversationId);
  // The list is read again after a rename, so it has the newest title.
  const title =
    conversations?.find((listed) => listed.conversationId === conversationId)?.title ??
    conversation?.title ??
    'New conversation';
  useEffect(() => {
    if (conversation !== undefined) setModel(conversation.model);
    else setModel((current) => current ?? models.find((info) => info.default)?.name ?? models[0]?.name);
  }, [conversation, models]);
  useEffect(() => {
    if (conversation !== undefined) setAutorun(conversation.autorun);
  }, [conversation]);

  return (
    <main className={conversationId === undefined ? 'page page-chat' : 'page page-chat with-state'}>
      <aside className="chat-sidebar">
        <h1>Chat</h1>
        {listError !== undefined && (
          <p role="alert" className="error-text">
            Conversations: {listError}
          </p>
        )}
        {conversations !== undefined && (
          <ConversationList
            conversations={conversations}
            currentId={conversationId}
            onChanged={reload}
            onDeleted={(id) => {
              reload();
              if (id === conversationId) navigate('/chat');
            }}
          />
        )}
      </aside>
      <section className="chat-main" aria-label={title}>
        <h2>{title}</h2>
        <ErrorText error={error} />
        {listError === undefined && models.length === 0 && conversations !== undefined && (
          <p className="muted">
            This server has no model configured: start it with `mci serve --model provider:model`.
          </p>
        )}
        <div className="messages" aria-live="polite" ref={messagesBox}>
          {loadEarlier !== undefined && (
            <button type="button" className="load-earlier" onClick={loadEarlier}>
              Show earlier messages
            </button>
          )}
          {/* A live answer and its stored message share a key (the stream), so its cards stay in place. */}
          {[
            ...messages.map((message) => ({
              key: store.streamOf(message.id) ?? `message-${message.id}`,
              message,
              pids: message.pids as ReadonlyArray<number | undefined>,
            })),
            ...turn.steps.map((step) => ({
              key: step.streamId,
              message: liveMessage(step),
              pids: step.pids,
            })),
          ].map(({ key, message, pids }) => (
            <MessageView key={key} message={message} pids={pids} />
          ))}
          {turn.running && turn.steps.length === 0 && <p className="muted">The model is thinking…</p>}
          <ErrorText error={turn.error} />
          {turn.stopped === 'canceled' && <p className="muted">Stopped.</p>}
        </div>
        <Composer
          models={models}
          model={model}
          onModel={setModel}
          autorun={autorun}
          onAutorun={setAutorun}
          running={turn.running}
          onSend={async (text) => {
            const id = await store.send(text, {
              ...(conversationId !== undefined && { conversationId }),
              ...(model !== undefined && { model }),
              autorun,
            });
            if (id !== conversationId) navigate(`/chat/${id}`);
          }}
          onStop={() => {
            if (conversationId !== undefined) void store.stop(conversationId);
          }}
        />
      </section>
      {conversationId !== undefined && (
        <ConversationState conversationId={conversationId} turnKey={turn.running} />
      )}
    </main>
  );
}
