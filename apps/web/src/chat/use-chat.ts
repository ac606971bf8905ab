import type { ChatMessage, Conversation, ModelInfo } from '@mci/client';
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { chatStoreOf, type TurnState } from './chat-store.ts';

/** The conversations of the signed-in principal and the server's models. */
export function useConversations(refreshKey: unknown): {
  conversations: Conversation[] | undefined;
  models: ModelInfo[];
  error: string | undefined;
  reload: () => void;
} {
  const client = useClient();
  const [state, setState] = useState<{ conversations?: Conversation[]; models: ModelInfo[]; error?: string }>(
    {
      models: [],
    },
  );
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey and tick ask for a new list
  useEffect(() => {
    let active = true;
    client.chat
      .list()
      .then(({ conversations, models }) => active && setState({ conversations, models }))
      .catch((error: Error) => active && setState((previous) => ({ ...previous, error: error.message })));
    return () => {
      active = false;
    };
  }, [client, refreshKey, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { conversations: state.conversations, models: state.models, error: state.error, reload };
}

/** One conversation: its stored messages (refreshed as the turn stores more) and its live turn. */
export function useConversation(conversationId: string | undefined): {
  conversation: Conversation | undefined;
  messages: ChatMessage[];
  turn: TurnState;
  error: string | undefined;
  /** Loads the page of messages older than those shown; absent when there is none. */
  loadEarlier?: () => void;
} {
  const client = useClient();
  const store = chatStoreOf(client);
  useSyncExternalStore(store.listen, store.version);
  const turn = store.turn(conversationId);
  const [loaded, setLoaded] = useState<{
    id?: string;
    conversation?: Conversation;
    messages: ChatMessage[];
    /** The `before` of the page older than what is loaded, when there is one. */
    nextCursor?: number;
    error?: string;
  }>({
    messages: [],
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a turn that starts or ends stored messages: read them again
  useEffect(() => {
    if (conversationId === undefined) {
      setLoaded({ messages: [] });
      return;
    }
    let active = true;
    client.chat
      .get(conversationId)
      .then(
        ({ conversation, messages, nextCursor }) =>
          active &&
          setLoaded((previous) => {
            // Earlier pages already loaded stay (a turn that ends reads the newest page again).
            const earlier =
              previous.id === conversationId && previous.messages.length > 0
                ? previous.messages.filter((message) => message.id < (messages[0]?.id ?? 0))
                : [];
            const cursor = earlier.length > 0 ? previous.nextCursor : nextCursor;
            return {
              id: conversationId,
              conversation,
              messages: [...earlier, ...messages],
              ...(cursor !== undefined && { nextCursor: cursor }),
            };
          }),
      )
      .catch(
        (error: Error) => active && setLoaded({ id: conversationId, messages: [], error: error.message }),
      );
    return () => {
      active = false;
    };
  }, [client, conversationId, turn.running]);
  const messages = useMemo(() => {
    const byId = new Map<number, ChatMessage>();
    if (loaded.id === conversationId) for (const message of loaded.messages) byId.set(message.id, message);
    for (const message of turn.stored) byId.set(message.id, message);
    return [...byId.values()].sort((a, b) => a.id - b.id);
  }, [loaded, turn.stored, conversationId]);
  const nextCursor = loaded.id === conversationId ? loaded.nextCursor : undefined;
  const loadEarlier = useCallback(() => {
    if (conversationId === undefined || nextCursor === undefined) return;
    void client.chat.get(conversationId, { before: nextCursor }).then(
      (page) =>
        setLoaded((previous) =>
          previous.id !== conversationId
            ? previous
            : {
                ...previous,
                messages: [...page.messages, ...previous.messages],
                ...(page.nextCursor === undefined
                  ? { nextCursor: undefined }
                  : { nextCursor: page.nextCursor }),
              },
        ),
      (error: Error) => setLoaded((previous) => ({ ...previous, error: error.message })),
    );
  }, [client, conversationId, nextCursor]);
  return {
    conversation: loaded.id === conversationId ? loaded.conversation : undefined,
    ...(nextCursor !== undefined && { loadEarlier }),
    messages,
    turn,
    error: loaded.id === conversationId ? loaded.error : undefined,
  };
}
