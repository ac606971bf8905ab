import type { ChatMessage } from '@mci/client';
import { AnswerMarkdown } from './answer-markdown.tsx';

/**
 * One message: the user's text, the assistant's answer (markdown with live process cards: `pids[N]`
 * is the process of exec block N, @default the message's own pids), or the results sent back to the
 * model (collapsed).
 */
export function MessageView({
  message,
  pids = message.pids,
}: {
  message: ChatMessage;
  pids?: ReadonlyArray<number | undefined>;
}) {
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
        <AnswerMarkdown text={message.text} pids={pids} />
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
