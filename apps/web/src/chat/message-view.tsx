import type { ChatMessage } from '@mci/client';
import { AnswerMarkdown } from './answer-markdown.tsx';

/**
 * One stored message: the user's text, the assistant's answer (markdown with live process cards), or
 * the results sent back to the model (collapsed).
 */
export function MessageView({ message }: { message: ChatMessage }) {
  if (message.role === 'results') {
    return (
      <details className="message message-results">
        <summary>Results sent to the model (step {message.step ?? 1})</summary>
        <pre className="log">{message.text}</pre>
      </details>
    );
  }
  return (
    <article
      className={`message message-${message.role}`}
      aria-label={message.role === 'user' ? 'You' : 'Assistant'}
    >
      {message.role === 'user' ? (
        <p className="user-text">{message.text}</p>
      ) : (
        <AnswerMarkdown text={message.text} pids={message.pids} />
      )}
      {message.role === 'assistant' && (
        <footer className="muted message-meta">
          {message.model}
          {message.usage !== undefined &&
            ` · ${message.usage.inputTokens} in, ${message.usage.outputTokens} out`}
        </footer>
      )}
    </article>
  );
}
