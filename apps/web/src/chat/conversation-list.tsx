import type { Conversation } from '@mci/client';
import { useState } from 'react';
import { Link } from 'wouter';
import { ErrorText } from '../components/error-text.tsx';
import { useClient } from '../connection/connection-context.ts';

/** The conversations, newest first: open, rename or delete one, or start a new one. */
export function ConversationList({
  conversations,
  currentId,
  onChanged,
  onDeleted,
}: {
  conversations: Conversation[];
  currentId: string | undefined;
  onChanged: () => void;
  onDeleted: (conversationId: string) => void;
}) {
  const client = useClient();
  const [renaming, setRenaming] = useState<string>();
  const [title, setTitle] = useState('');
  const [error, setError] = useState<string>();
  const fail = (caught: Error) => setError(caught.message);
  return (
    <nav className="conversations" aria-label="Conversations">
      <Link href="/chat" className="new-conversation">
        New conversation
      </Link>
      <ErrorText error={error} />
      <ul>
        {conversations.map((conversation) => {
          const id = conversation.conversationId;
          return (
            <li key={id} className={id === currentId ? 'conversation current' : 'conversation'}>
              {renaming === id ? (
                <form
                  aria-label={`Rename ${conversation.title}`}
                  onSubmit={(event) => {
                    event.preventDefault();
                    client.chat
                      .rename(id, title)
                      .then(() => {
                        setRenaming(undefined);
                        onChanged();
                      })
                      .catch(fail);
                  }}
                >
                  <input
                    aria-label="Title"
                    value={title}
                    onChange={(event) => setTitle(event.target.value)}
                  />
                  <button type="submit">Save</button>
                </form>
              ) : (
                <>
                  <Link
                    href={`/chat/${id}`}
                    className="conversation-title"
                    aria-current={id === currentId ? 'page' : undefined}
                  >
                    {conversation.title}
                  </Link>
                  <span className="conversation-actions">
                    <button
                      type="button"
                      className="link-button"
                      aria-label={`Rename ${conversation.title}`}
                      onClick={() => {
                        setTitle(conversation.title);
                        setRenaming(id);
                      }}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      className="link-button danger-link"
                      aria-label={`Delete ${conversation.title}`}
                      onClick={() =>
                        client.chat
                          .delete(id)
                          .then(() => onDeleted(id))
                          .catch(fail)
                      }
                    >
                      Delete
                    </button>
                  </span>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
