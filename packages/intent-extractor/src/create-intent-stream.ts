import { IntentExtractorError } from './errors.ts';
import { infoOf, intentFromBlock } from './fenced-block.ts';
import { isExecInfo } from './info-string.ts';
import type { Intent } from './intent.ts';
import { BlockParser } from './stream/block-parser.ts';
import { LineSplitter } from './stream/line-splitter.ts';

/** An incremental extractor for streamed model output (see {@link createIntentStream}). */
export interface IntentStream {
  /**
   * Feeds the next chunk, which may split the text anywhere (inside a fence, an attribute, a
   * surrogate pair, or between `\r` and `\n`).
   *
   * @returns The intents completed by this chunk, in document order: a block is complete once the
   * line ending after its closing fence has arrived (or the line that ends its block quote or list item).
   * @throws {IntentExtractorError} `INVALID_INPUT` for a non-string chunk, `STREAM_ENDED` after `end()`.
   */
  push(chunk: string): Intent[];
  /**
   * Ends the stream.
   *
   * @returns The intents completed by the end: the last block if no line ending followed its closing
   * fence, and any block left open, with `closed: false`.
   * @throws {IntentExtractorError} `STREAM_ENDED` when called twice.
   */
  end(): Intent[];
}

/** Options of {@link createIntentStream}. */
export interface IntentStreamOptions {
  /**
   * Most characters of content kept for one open exec block. Past it the block is reported at once
   * as an unclosed intent with `tooLarge: true` and empty `code`, and the rest of it is skipped.
   * @default no limit
   */
  maxBlockLength?: number;
  /**
   * Most characters of an unfinished line held between chunks; the rest of that line is dropped
   * (block structure only depends on a line's start). @default no limit
   */
  maxLineLength?: number;
}

/**
 * Creates an incremental intent extractor. For any text and any way of cutting it into chunks, the
 * concatenated results of `push` and `end` equal `extractIntents(text)`. Each character is handled a
 * bounded number of times (a line-based CommonMark block parser; no re-parsing), so the cost is linear
 * in the text, and memory holds only the current line and the content of the open exec block
 * (each bounded by `options`; with a bound hit, the equality with `extractIntents` no longer holds).
 *
 * @see https://spec.commonmark.org/0.31.2/#appendix-a-parsing-strategy
 */
export function createIntentStream(options: IntentStreamOptions = {}): IntentStream {
  let ready: Intent[] = [];
  let count = 0;
  let ended = false;
  const parser = new BlockParser({
    wants: (lang, meta) => isExecInfo(infoOf(lang, meta)),
    onFence: (block) => {
      const intent = intentFromBlock(block, count);
      if (intent) {
        count++;
        ready.push(intent);
      }
    },
    ...(options.maxBlockLength !== undefined && { maxBlockLength: options.maxBlockLength }),
    onTooLarge: (block) => {
      const intent = intentFromBlock(block, count);
      if (intent) {
        count++;
        ready.push({ ...intent, tooLarge: true });
      }
    },
  });
  const splitter = new LineSplitter(parser, options.maxLineLength);
  const take = (): Intent[] => {
    // Most chunks complete nothing: answer a new array and leave `ready` alone (storing a new array into
    // a long stream's context, which lives in V8's old space, would cost a write barrier every chunk).
    if (ready.length === 0) return [];
    const out = ready;
    ready = [];
    return out;
  };
  const assertOpen = (what: string) => {
    if (ended)
      throw new IntentExtractorError('STREAM_ENDED', `${what} called after end() on an intent stream`);
  };
  return {
    push(chunk) {
      assertOpen('push()');
      if (typeof chunk !== 'string') {
        throw new IntentExtractorError('INVALID_INPUT', `push() expects a string chunk, got ${typeof chunk}`);
      }
      splitter.push(chunk);
      return take();
    },
    end() {
      assertOpen('end()');
      ended = true;
      parser.finish(splitter.end());
      return take();
    },
  };
}
