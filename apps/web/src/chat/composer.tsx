import type { ModelInfo } from '@mci/client';
import { useState } from 'react';
import { ErrorText } from '../components/error-text.tsx';

/**
 * The message box: Enter sends, Shift+Enter starts a new line. While a turn runs, Stop cancels it.
 * The "Run blocks automatically" switch sets the conversation's run mode for the next turn.
 */
export function Composer({
  models,
  model,
  onModel,
  autorun,
  onAutorun,
  running,
  onSend,
  onStop,
}: {
  models: ModelInfo[];
  model: string | undefined;
  onModel: (model: string) => void;
  /** Blocks run as the model writes them, or each waits for its card's Run button. */
  autorun: boolean;
  onAutorun: (autorun: boolean) => void;
  running: boolean;
  onSend: (text: string) => Promise<void>;
  onStop: () => void;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const send = () => {
    const message = text.trim();
    if (message === '' || running) return;
    setError(undefined);
    onSend(message)
      .then(() => setText(''))
      .catch((caught: Error) => setError(caught.message));
  };
  return (
    <form
      className="composer"
      aria-label="Composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        aria-label="Message"
        rows={3}
        value={text}
        placeholder="Ask the model… (Enter sends, Shift+Enter for a new line)"
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      <div className="composer-bar">
        <label className="inline-label">
          Model
          <select aria-label="Model" value={model ?? ''} onChange={(event) => onModel(event.target.value)}>
            {models.map((info) => (
              <option key={info.name} value={info.name} title={info.name}>
                {modelLabel(info.name)}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-label">
          <input
            type="checkbox"
            role="switch"
            aria-checked={autorun}
            aria-label="Run blocks automatically"
            checked={autorun}
            disabled={running}
            onChange={(event) => onAutorun(event.target.checked)}
          />
          Run blocks automatically
        </label>
        {running ? (
          <button type="button" className="danger" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={text.trim() === ''}>
            Send
          </button>
        )}
      </div>
      <ErrorText error={error} />
    </form>
  );
}

/** A model's name as the picker shows it: a replay model by its transcript's file name, others whole. */
export function modelLabel(name: string): string {
  return name.startsWith('replay:') ? `replay:${name.slice('replay:'.length).split(/[\\/]/).at(-1)}` : name;
}
