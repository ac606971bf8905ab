import type { AgentEvent } from '@mci/agent';
import type { ProcessSnapshot } from '@mci/client';
import { formatDuration } from './process-format.ts';
import { type BoardStream, createStatusBoard } from './status-board.ts';

/** Where `mci chat` writes. */
export interface ChatIo {
  stdout: BoardStream;
  stderr: BoardStream;
}

/** Shows a turn's events; `finish` prints what stays after the turn. */
export interface ChatView {
  event(event: AgentEvent): void;
  /** Ends the turn's display (flushes a partial line); prints the final answer when not on a terminal. */
  finish(answer: string): void;
}

/**
 * The view of `mci chat`. `--json`: every event as one JSON line on stdout. On a terminal: the
 * answers as they stream, line by line, above a live status line per process. Elsewhere (a pipe):
 * process status lines on stderr, and only the final answer on stdout.
 */
export function createChatView(io: ChatIo, options: { json: boolean }): ChatView {
  if (options.json) {
    return {
      event: (event) => io.stdout.write(`${JSON.stringify(event)}\n`),
      finish: () => {},
    };
  }
  const live = io.stdout.isTTY === true;
  const board = createStatusBoard(live ? io.stdout : io.stderr);
  const dim = live ? faint : (text: string) => text;
  let partial = '';
  const flush = () => {
    if (partial) board.note(partial);
    partial = '';
  };
  return {
    event(event) {
      switch (event.type) {
        case 'token': {
          if (!live) return;
          const lines = (partial + event.text).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) board.note(line);
          return;
        }
        case 'step':
          flush();
          if (event.usage && live) {
            board.note(
              dim(
                `── step ${event.step}: ${event.usage.inputTokens} tokens in, ${event.usage.outputTokens} out`,
              ),
            );
          }
          board.done();
          return;
        case 'process':
          board.set(event.pid, statusLine(event));
          return;
        case 'intent':
          if (event.rejected !== undefined)
            board.note(dim(`block ${event.index} (${event.lang}) not run: ${event.rejected}`));
          return;
        case 'output':
          board.note(dim(`pid ${event.pid} output: ${clip(JSON.stringify(event.value) ?? 'undefined')}`));
          return;
        case 'error':
          flush();
          return;
        default:
          return;
      }
    },
    finish(answer) {
      flush();
      if (!live) io.stdout.write(answer.endsWith('\n') ? answer : `${answer}\n`);
    },
  };
}

/** `pid 7 [block 0]: running`, `pid 7 [block 0]: success in 12ms`, with the error of a failed run. */
export function statusLine(process: ProcessSnapshot): string {
  const block = process.metadata?.intentIndex === undefined ? '' : ` [block ${process.metadata.intentIndex}]`;
  const head = `pid ${process.pid}${block}: `;
  if (process.state !== 'idle' || process.status === null) return `${head}${process.state}`;
  const time = process.durationMs === undefined ? '' : ` in ${formatDuration(process.durationMs)}`;
  const error = process.error
    ? `: ${process.error.name}: ${process.error.message}${process.error.line ? ` (line ${process.error.line})` : ''}`
    : '';
  return `${head}${process.status}${time}${error}`;
}

function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function faint(text: string): string {
  return `\x1b[2m${text}\x1b[22m`;
}
