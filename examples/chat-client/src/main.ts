#!/usr/bin/env node
// The reference chat client of MCI Server: it plays a chat application that streams a model's answer
// to the server as the tokens arrive, shows each exec block and process as it happens, and prints the
// response pipe it would hand back to the model. See "Connect your chat client" in the README.
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { ClientError, connect, type ProcessSnapshot, type ServerEvent } from '@mci/client';
import { createStatusBoard } from './status-board.ts';
import { splitTokens } from './tokens.ts';

const USAGE = `usage: mci-chat [FILE|-] [--url URL] [--token TOKEN] [--rate TOKENS_PER_SECOND] [--ref REF]

Streams a model's answer (FILE, or stdin) to an MCI server token by token, prints each exec block and
process on stderr as it happens, and the response pipe on stdout.

  --url    server URL (env MCI_URL; default http://127.0.0.1:7687)
  --token  API token (env MCI_TOKEN, else MCI_API_KEY)
  --rate   tokens per second, 0 for as fast as possible (default 50)
  --ref    label of the turn's processes (default chat-<time>)`;

class UsageError extends Error {}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      rate: { type: 'string', default: '50' },
      ref: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate < 0)
    throw new UsageError(`--rate must be a number >= 0, got ${values.rate}`);
  if (positionals.length > 1) throw new UsageError('give one FILE (or - for stdin)');
  const answer = await readAnswer(positionals[0]);
  const url = values.url ?? process.env.MCI_URL ?? 'http://127.0.0.1:7687';
  const token = values.token || process.env.MCI_TOKEN || process.env.MCI_API_KEY;
  const ref = values.ref ?? `chat-${Date.now()}`;

  const board = createStatusBoard();
  await using client = await connect(url, token ? { token } : {});
  client.onStateChange((state) => {
    if (state === 'reconnecting') board.note('connection lost: reconnecting (nothing will be missed)');
    else if (state === 'open') board.note('reconnected');
  });

  // The few lines a chat application needs: open a stream, write tokens, end, await the result.
  const stream = client.openStream({ ref, onEvent: (event) => show(event, board) });
  const writes: Promise<void>[] = [];
  const started = performance.now();
  for (const [i, piece] of splitTokens(answer).entries()) {
    if (rate > 0) await sleepUntil(started + (i * 1000) / rate);
    writes.push(stream.write(piece));
  }
  await Promise.all(writes);
  await stream.end();
  const result = await stream.result;
  board.done();
  process.stdout.write(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
  return 0;
}

/** Blocks already announced, by index: the server may report a block's process before its intent. */
const announced = new Set<number>();

/** One event as the chat client shows it: intents and outputs as lines, processes as status lines. */
function show(event: ServerEvent, board: ReturnType<typeof createStatusBoard>): void {
  switch (event.type) {
    case 'intent':
      announce(event.index, event.lang, event.attributes, board, event.pid, event.rejected);
      return;
    case 'process': {
      const { metadata } = event;
      if (metadata?.intentIndex !== undefined) {
        announce(metadata.intentIndex, event.lang, metadata.attributes ?? {}, board, event.pid);
      }
      board.set(event.pid, statusLine(event));
      return;
    }
    case 'output':
      board.note(`pid ${event.pid} output: ${clip(JSON.stringify(event.value) ?? 'undefined')}`);
      return;
    case 'log':
      for (const line of event.text.replace(/\n$/, '').split('\n'))
        board.note(`pid ${event.pid} ${event.stream}: ${clip(line)}`);
      return;
    case 'tool':
      board.note(
        `pid ${event.pid} called ${event.name} (${event.durationMs.toFixed(1)} ms${event.isError ? ', error' : ''})`,
      );
      return;
    case 'stream.result':
      return;
  }
}

/** `block 2 (ts, load) -> pid 7` or `block 3 (python) not run: ...`, once per block. */
function announce(
  index: number,
  lang: string,
  attributes: Record<string, string | boolean>,
  board: ReturnType<typeof createStatusBoard>,
  pid: number | undefined,
  rejected?: string,
): void {
  if (announced.has(index)) return;
  announced.add(index);
  const what = `block ${index} (${lang}${label(attributes)})`;
  board.note(rejected === undefined ? `${what} -> pid ${pid}` : `${what} not run: ${rejected}`);
}

function statusLine(process: ProcessSnapshot): string {
  const block = process.metadata?.intentIndex === undefined ? '' : ` [block ${process.metadata.intentIndex}]`;
  const head = `pid ${process.pid}${block}: `;
  if (process.state !== 'idle' || process.status === null) return `${head}${process.state}`;
  const time = process.durationMs === undefined ? '' : ` in ${Math.round(process.durationMs)} ms`;
  const error = process.error
    ? `: ${process.error.name}: ${process.error.message}${process.error.line ? ` (line ${process.error.line})` : ''}`
    : '';
  return `${head}${process.status}${time}${error}`;
}

function label(attributes: Record<string, string | boolean>): string {
  const name = attributes.id ?? attributes.title;
  return typeof name === 'string' ? `, ${name}` : '';
}

function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

async function readAnswer(file: string | undefined): Promise<string> {
  if (file === undefined || file === '-') {
    if (process.stdin.isTTY) throw new UsageError('no answer: give a FILE, or pipe the answer in');
    return readStream(process.stdin);
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function sleepUntil(time: number): Promise<void> {
  const wait = time - performance.now();
  return wait <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, wait));
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const usage =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const message =
      error instanceof ClientError ? `${error.message} [${error.code}]` : (error as Error).message;
    process.stderr.write(`mci-chat: ${message}\n${usage ? `${USAGE}\n` : ''}`);
    process.exitCode = usage ? 2 : 1;
  },
);
