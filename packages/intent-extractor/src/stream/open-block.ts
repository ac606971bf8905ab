/** Kinds of blocks the streaming parser tracks; inline content is never parsed. */
export type BlockKind =
  | 'document'
  | 'blockQuote'
  | 'list'
  | 'item'
  | 'paragraph'
  | 'fencedCode'
  | 'indentedCode'
  | 'html'
  | 'heading'
  | 'thematicBreak';

/** The state of an open fenced code block. */
export interface OpenFence {
  /** `` ` `` or `~`. */
  char: string;
  length: number;
  /** Indentation of the opening fence, removed from content lines. */
  indent: number;
  startLine: number;
  lastLine: number;
  lang: string | null;
  meta: string | null;
  /** Whether content is kept: only for blocks that become intents. */
  keep: boolean;
  /** The opening line's ending, then each content line and its ending (only when `keep`). */
  parts: string[];
  /** Characters of content kept so far (when `keep`). */
  size: number;
}

/**
 * One open block on the parser's stack (the path from the document to the innermost open block).
 * One class with every field keeps the objects monomorphic on the hot path.
 */
export class OpenBlock {
  readonly kind: BlockKind;
  hasChild = false;
  /** List and item: marker column and content padding. */
  markerOffset = 0;
  padding = 0;
  /** List and item: `*`, `+`, `-`, or the ordered delimiter `.`/`)` prefixed with `1`. */
  marker = '';
  /** HTML block: start condition 1-7. */
  htmlKind = 0;
  fence: OpenFence | null = null;
  /** Indented code that may not continue past its first line. */
  endsWithLine = false;

  constructor(kind: BlockKind) {
    this.kind = kind;
  }

  /** Whether the block takes content lines (the "leaf" blocks of CommonMark that span lines). */
  get acceptsLines(): boolean {
    const kind = this.kind;
    return kind === 'paragraph' || kind === 'fencedCode' || kind === 'indentedCode' || kind === 'html';
  }

  /** @see https://spec.commonmark.org/0.31.2/#container-blocks */
  canContain(kind: BlockKind): boolean {
    switch (this.kind) {
      case 'document':
      case 'blockQuote':
      case 'item':
        return kind !== 'item';
      case 'list':
        return kind === 'item';
      default:
        return false;
    }
  }
}
