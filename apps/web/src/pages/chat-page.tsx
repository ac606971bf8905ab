/** The chat page (conversations with a model). */
export function ChatPage({ conversationId }: { conversationId?: string }) {
  return (
    <main className="page page-chat">
      <h1>Chat</h1>
      {conversationId}
    </main>
  );
}
