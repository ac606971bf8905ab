import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatModel, ModelAnswer, ModelRequest } from './model.ts';
import { ModelError } from './model-error.ts';

/** Settings of a replay model. */
export interface ReplayModelSettings {
  /** The markdown transcript (see {@link parseTranscript}). */
  file: string;
  /** The model part of its name (`replay:NAME`), as the user wrote it. @default `file` */
  name?: string;
  /** Tokens played per second; 0 plays them without pauses. @default 40 */
  tokensPerSecond?: number;
}

// A role heading on a line of its own: `## assistant`, `## user`.
const ROLE_HEADING = /^##[ \t]+(assistant|user)[ \t]*$/gim;

/**
 * The answers of a markdown transcript: the text of each `## assistant` section (up to the next
 * `## assistant` or `## user` heading), in order; `## user` sections are notes for the reader and
 * are skipped. A file without such headings (the format of `examples/transcripts`) is one answer.
 */
export function parseTranscript(markdown: string): string[] {
  const headings = [...markdown.matchAll(ROLE_HEADING)];
  if (headings.length === 0) return markdown.trim() ? [markdown.trim()] : [];
  const answers: string[] = [];
  headings.forEach((heading, i) => {
    if (heading[1]?.toLowerCase() !== 'assistant') return;
    const start = heading.index + heading[0].length;
    const end = headings[i + 1]?.index ?? markdown.length;
    const text = markdown.slice(start, end).trim();
    if (text) answers.push(text);
  });
  return answers;
}

/**
 * Cuts text into token-sized pieces, roughly as a model's tokenizer would: a word with its leading
 * space, a run of punctuation with its leading space, or one whitespace character. Joining the pieces
 * gives the text back exactly.
 */
export function splitTokens(text: string): string[] {
  return text.match(/ ?[\p{L}\p{N}_]+| ?[^\s\p{L}\p{N}_]+|\s/gu) ?? [];
}

/**
 * A model that plays a transcript's answers instead of asking a provider, for demos and tests
 * without a key. Answer n of a conversation (counting its assistant messages) is the transcript's
 * answer n, cycling when the transcript has fewer. Usage is estimated (4 characters a token).
 * @throws ModelError `TRANSCRIPT` when the file cannot be read or has no answer.
 */
export async function createReplayModel(settings: ReplayModelSettings): Promise<ChatModel> {
  let markdown: string;
  try {
    markdown = await readFile(settings.file, 'utf8');
  } catch (error) {
    throw new ModelError('TRANSCRIPT', `replay transcript ${settings.file}: ${(error as Error).message}`, {
      provider: 'replay',
      model: settings.file,
    });
  }
  const answers = parseTranscript(markdown);
  if (answers.length === 0) {
    throw new ModelError('TRANSCRIPT', `replay transcript ${settings.file} has no answer`, {
      provider: 'replay',
      model: settings.file,
    });
  }
  const pauseMs = settings.tokensPerSecond === 0 ? 0 : 1000 / (settings.tokensPerSecond ?? 40);
  const model = settings.name ?? settings.file;
  return {
    name: `replay:${model}`,
    provider: 'replay',
    model,
    contextWindow: 1_000_000,
    async stream(request: ModelRequest): Promise<ModelAnswer> {
      const played = request.messages.filter((message) => message.role === 'assistant').length;
      const text = answers[played % answers.length] ?? '';
      // Tokens come from a later turn of the event loop, as a provider's would, even without pauses.
      await sleep(0, undefined, request.signal ? { signal: request.signal } : {});
      for (const token of splitTokens(text)) {
        request.signal?.throwIfAborted();
        if (pauseMs > 0) await sleep(pauseMs, undefined, request.signal ? { signal: request.signal } : {});
        request.onToken(token);
      }
      const prompt = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
      return {
        text,
        usage: { inputTokens: Math.ceil(prompt / 4), outputTokens: Math.ceil(text.length / 4) },
        finishReason: 'stop',
      };
    },
  };
}
