import type { FencedBlock } from '../fenced-block.ts';
import {
  ATX_HEADING,
  CLOSING_FENCE,
  htmlBlockEnds,
  htmlBlockStart,
  matchAt,
  maybeSpecial,
  OPENING_FENCE,
  SETEXT_UNDERLINE,
  splitInfo,
  THEMATIC_BREAK,
  testAt,
} from './block-syntax.ts';
import {
  consumeBlockQuoteMarker,
  continuesBlockQuote,
  continuesListItem,
  startListItem,
} from './container-markers.ts';
import { CODE_INDENT, LineCursor } from './line-cursor.ts';
import { type BlockKind, OpenBlock, type OpenFence } from './open-block.ts';

const MATCHED = 0;
const FAILED = 1;
const CONSUMED = 2;

/** What the parser tells its owner about fenced blocks. */
export interface BlockParserHooks {
  /** Whether a block with this (decoded) language and meta is wanted; others are not reported. */
  wants(lang: string | null, meta: string | null): boolean;
  /** A wanted fenced block has ended. */
  onFence(block: FencedBlock): void;
  /** Most characters of content kept for one open wanted block. @default no limit */
  maxBlockLength?: number;
  /**
   * A wanted block's content passed `maxBlockLength`: its content is dropped, the rest of it is
   * skipped, and `onFence` is not called for it.
   */
  onTooLarge?(block: FencedBlock): void;
}

/**
 * An incremental CommonMark block-structure parser fed one complete line at a time: it tracks block
 * quotes, list items, paragraphs (for lazy continuation and interruption), indented code, HTML blocks,
 * headings and thematic breaks exactly as far as they decide where fenced code blocks start and end,
 * and never parses inline content. Each line is processed once, so the work is linear in the input.
 *
 * The algorithm is the two-phase block parse of the spec's appendix, after commonmark.js.
 * @see https://spec.commonmark.org/0.31.2/#appendix-a-parsing-strategy
 */
export class BlockParser {
  readonly #hooks: BlockParserHooks;
  /** Open blocks from the document down to the innermost. */
  readonly #open: OpenBlock[] = [new OpenBlock('document')];
  #lineNumber = 0;
  /** The current line's ending (`''` for the unterminated last line). */
  #ending = '';
  readonly #cursor = new LineCursor();
  /** Stack depth of the last matched container, and whether every open block matched. */
  #lastMatched = 0;
  #allClosed = true;
  /**
   * Whether new containers on this line interrupt a paragraph or indented code that every container
   * matched (remark-parse / micromark treat indented code like a paragraph here).
   */
  #interrupt = false;
  /**
   * An empty list item ended at a blank line, and only blank lines followed. micromark keeps such an item
   * open until the next non-blank line, which does not continue it: that line is lazy (see
   * {@link #isLazyLine}) unless it starts a container.
   */
  #emptyItemEnded = false;
  /** Whether a block quote or list item started on the current line. */
  #containerStarted = false;

  constructor(hooks: BlockParserHooks) {
    this.#hooks = hooks;
  }

  get #tip(): OpenBlock {
    return this.#open[this.#open.length - 1]!;
  }

  /** Widens the line ending of the last line from `\r` to `\r\n` (the `\n` came in a later chunk). */
  widenLastEnding(): void {
    const fence = this.#tip.fence;
    if (fence?.keep && fence.lastLine === this.#lineNumber) fence.parts[fence.parts.length - 1] = '\r\n';
  }

  /** Processes one complete line (without its line ending). */
  line(text: string, ending: string): void {
    this.#lineNumber++;
    this.#cursor.reset(text);
    this.#ending = ending;
    this.#containerStarted = false;
    this.#incorporate();
  }

  /**
   * Ends the document: every open block closes. `endedWithLineEnding` tells whether the last line had
   * a line ending (CommonMark keeps an unclosed fence's trailing blank line then).
   */
  finish(endedWithLineEnding: boolean): void {
    // micromark sees an empty last line after a final line ending: list items continue on it, block
    // quotes do not, and a fence inside a block quote then ends before that line ending.
    const keepsEnding = endedWithLineEnding && !this.#open.some((block) => block.kind === 'blockQuote');
    while (this.#open.length > 1) this.#finalize(keepsEnding ? 'eof-eol' : 'eof');
  }

  #incorporate(): void {
    const open = this.#open;
    let matched = 1;
    for (; matched < open.length; matched++) {
      this.#cursor.findNextNonspace();
      const block = open[matched]!;
      const result = this.#continue(block);
      if (result === CONSUMED) return;
      if (result === FAILED) {
        if (block.kind === 'item' && !block.hasChild && this.#cursor.blank) this.#emptyItemEnded = true;
        break;
      }
    }
    this.#lastMatched = matched - 1;
    this.#allClosed = matched === open.length;
    const tip = this.#tip;
    this.#interrupt =
      (tip.kind === 'paragraph' || (tip.kind === 'indentedCode' && !tip.endsWithLine)) &&
      matched >= open.length - 1;
    let container = open[matched - 1]!;
    let matchedLeaf = container.kind !== 'paragraph' && container.acceptsLines;

    while (!matchedLeaf) {
      this.#cursor.findNextNonspace();
      if (!this.#cursor.indented && !maybeSpecial(this.#cursor.line.charCodeAt(this.#cursor.nextNonspace))) {
        this.#cursor.advanceNextNonspace();
        break;
      }
      const started = this.#tryStarts(container);
      if (started === MATCHED) {
        this.#cursor.advanceNextNonspace();
        break;
      }
      container = this.#tip;
      if (started === CONSUMED) matchedLeaf = true;
    }
    if (!this.#cursor.blank) this.#emptyItemEnded = false;

    // Lazy paragraph continuation: the unmatched containers stay open.
    if (!this.#allClosed && !this.#cursor.blank && this.#tip.kind === 'paragraph') return;
    this.#closeUnmatched();
    if (container.acceptsLines) {
      this.#addLine(container, this.#ending);
    } else if (this.#cursor.offset < this.#cursor.line.length && !this.#cursor.blank) {
      this.#addChild('paragraph');
    }
  }

  /** Tries each block start in the spec's order; MATCHED means none applied. */
  #tryStarts(container: OpenBlock): number {
    const line = this.#cursor.line;
    const at = this.#cursor.nextNonspace;
    const code = line.charCodeAt(at);
    const indented = this.#cursor.indented;
    if (!indented && code === 62) return this.#startBlockQuote();
    if (!indented && code === 35 && testAt(ATX_HEADING, line, at)) return this.#startLeaf('heading');
    if (!indented && (code === 96 || code === 126)) {
      const fence = matchAt(OPENING_FENCE, line, at);
      if (fence) return this.#startFence(fence[0], this.#ending);
    }
    if (!indented && code === 60) {
      // Condition 7 cannot interrupt a paragraph; micromark allows it on a lazy line, though.
      const kind = htmlBlockStart(line, at, container.kind !== 'paragraph');
      if (kind !== 0) {
        if (kind === 7 && !this.#allClosed && !this.#cursor.blank && this.#tip.kind === 'paragraph') {
          // micromark quirk: condition 7 on a lazy line opens inside the lazy paragraph's containers.
          this.#finalize('container');
          this.#allClosed = true;
        }
        this.#closeUnmatched();
        this.#addChild('html').htmlKind = kind;
        return CONSUMED;
      }
    }
    if (!indented && container.kind === 'paragraph' && testAt(SETEXT_UNDERLINE, line, at)) {
      return this.#startLeaf('heading');
    }
    if (!indented && testAt(THEMATIC_BREAK, line, at)) return this.#startLeaf('thematicBreak');
    if (!indented || container.kind === 'list') {
      if (this.#startListItem()) return FAILED;
    }
    if (indented && this.#tip.kind !== 'paragraph' && !this.#cursor.blank) {
      const lazy = this.#isLazyLine();
      this.#cursor.advanceOffset(CODE_INDENT, true);
      this.#closeUnmatched();
      // micromark quirk: indented code that starts on a lazy line cannot continue past it.
      this.#addChild('indentedCode').endsWithLine = lazy;
      return CONSUMED;
    }
    return MATCHED;
  }

  #startBlockQuote(): number {
    this.#containerStarted = true;
    consumeBlockQuoteMarker(this.#cursor);
    this.#closeUnmatched('new-container');
    this.#addChild('blockQuote');
    return FAILED; // "container start": keep looking for starts inside it
  }

  #startLeaf(kind: BlockKind): number {
    this.#closeUnmatched();
    if (kind === 'heading' && this.#tip.kind === 'paragraph') this.#finalize('container');
    this.#addChild(kind);
    this.#cursor.offset = this.#cursor.line.length;
    return CONSUMED;
  }

  #startFence(sequence: string, ending: string): number {
    this.#closeUnmatched();
    const fenceIndent = this.#cursor.indent;
    const block = this.#addChild('fencedCode');
    this.#cursor.advanceNextNonspace();
    this.#cursor.advanceOffset(sequence.length, false);
    const { lang, meta } = splitInfo(this.#cursor.line.slice(this.#cursor.offset));
    const keep = this.#hooks.wants(lang, meta);
    block.fence = {
      char: sequence[0]!,
      length: sequence.length,
      indent: fenceIndent,
      startLine: this.#lineNumber,
      lastLine: this.#lineNumber,
      lang,
      meta,
      keep,
      parts: [ending],
      size: 0,
    };
    this.#cursor.offset = this.#cursor.line.length;
    return CONSUMED;
  }

  /** @see https://spec.commonmark.org/0.31.2/#list-items */
  #startListItem(): boolean {
    const start = startListItem(this.#cursor, this.#interrupt);
    if (!start) return false;
    const { marker, markerOffset, padding } = start;
    this.#containerStarted = true;
    this.#closeUnmatched('new-container');
    if (this.#tip.kind !== 'list' || this.#tip.marker !== marker) {
      const list = this.#addChild('list');
      list.marker = marker;
    }
    const item = this.#addChild('item');
    item.marker = marker;
    item.markerOffset = markerOffset;
    item.padding = padding;
    return true;
  }

  /** Whether an open block continues on the current line. */
  #continue(block: OpenBlock): number {
    switch (block.kind) {
      case 'blockQuote':
        return continuesBlockQuote(this.#cursor) ? MATCHED : FAILED;
      case 'item':
        return continuesListItem(this.#cursor, block) ? MATCHED : FAILED;
      case 'fencedCode':
        return this.#continueFence(block.fence!);
      case 'indentedCode':
        if (block.endsWithLine) return FAILED;
        if (this.#cursor.indent >= CODE_INDENT) this.#cursor.advanceOffset(CODE_INDENT, true);
        else if (this.#cursor.blank) this.#cursor.advanceNextNonspace();
        else return FAILED;
        return MATCHED;
      case 'html':
        return this.#cursor.blank && (block.htmlKind === 6 || block.htmlKind === 7) ? FAILED : MATCHED;
      case 'paragraph':
        return this.#cursor.blank ? FAILED : MATCHED;
      case 'heading':
      case 'thematicBreak':
        return FAILED;
      default:
        return MATCHED; // document, list
    }
  }

  #continueFence(fence: OpenFence): number {
    const line = this.#cursor.line;
    if (this.#cursor.indent <= 3 && line[this.#cursor.nextNonspace] === fence.char) {
      const closing = matchAt(CLOSING_FENCE, line, this.#cursor.nextNonspace);
      if (closing && closing[0].length >= fence.length) {
        fence.lastLine = this.#lineNumber;
        this.#finalize('fence');
        return CONSUMED;
      }
    }
    for (let i = fence.indent; i > 0 && this.#cursor.isSpaceOrTab(this.#cursor.offset); i--)
      this.#cursor.advanceOffset(1, true);
    return MATCHED;
  }

  #addLine(block: OpenBlock, ending: string): void {
    if (block.kind === 'fencedCode') {
      const fence = block.fence!;
      // The opening line's rest is the info string, already read.
      if (fence.startLine === this.#lineNumber) return;
      fence.lastLine = this.#lineNumber;
      if (!fence.keep) return;
      const text = this.#cursor.rest();
      fence.parts.push(text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text, ending);
      fence.size += text.length + ending.length;
      if (fence.size > (this.#hooks.maxBlockLength ?? Number.POSITIVE_INFINITY)) {
        fence.keep = false;
        fence.parts = [];
        this.#hooks.onTooLarge?.({
          lang: fence.lang,
          meta: fence.meta,
          value: '',
          startLine: fence.startLine,
          closingLine: null,
        });
      }
    } else if (
      block.kind === 'html' &&
      block.htmlKind <= 5 &&
      htmlBlockEnds(block.htmlKind, this.#cursor.line.slice(this.#cursor.offset))
    ) {
      this.#finalize('container');
    }
  }

  #addChild(kind: BlockKind): OpenBlock {
    while (!this.#tip.canContain(kind)) this.#finalize('container');
    this.#tip.hasChild = true;
    const block = new OpenBlock(kind);
    this.#open.push(block);
    return block;
  }

  /** Closes the blocks that the current line did not continue (`how` as in {@link #finalize}). */
  #closeUnmatched(how: 'container' | 'new-container' = 'container'): void {
    if (this.#allClosed) return;
    while (this.#open.length - 1 > this.#lastMatched) this.#finalize(how);
    this.#allClosed = true;
  }

  /**
   * Closes the innermost open block; `how` says what ended it: its closing `fence`, a line its
   * containers did not continue (`container`), a `new-container` starting, or the end of the document
   * after a line ending (`eof-eol`) or not (`eof`).
   */
  #finalize(how: 'fence' | 'container' | 'new-container' | 'eof' | 'eof-eol'): void {
    const block = this.#open.pop()!;
    const fence = block.fence;
    if (!fence?.keep) return;
    const closed = how === 'fence';
    const parts = fence.parts;
    // The block takes the last line ending when a fence, the end of the document or a new container
    // ends it, not when a line its containers do not continue does (remark-parse / micromark).
    if (how === 'container' || how === 'eof') parts.pop();
    // Exactly mdast-util-from-markdown's value: its data minus one leading and one trailing line ending.
    const value = parts.join('').replace(/^(\r?\n|\r)|(\r?\n|\r)$/g, '');
    this.#hooks.onFence({
      lang: fence.lang,
      meta: fence.meta,
      value,
      startLine: fence.startLine,
      closingLine: closed ? fence.lastLine : null,
    });
  }

  /** Whether some container did not match and no new container started: micromark's "lazy" line. */
  #isLazyLine(): boolean {
    if (this.#emptyItemEnded && !this.#containerStarted) return true;
    if (this.#allClosed) return false;
    const open = this.#open;
    let deepestContainer = open.length - 1;
    while (!open[deepestContainer]!.canContain('paragraph') && open[deepestContainer]!.kind !== 'list') {
      deepestContainer--;
    }
    return this.#lastMatched < deepestContainer;
  }
}
