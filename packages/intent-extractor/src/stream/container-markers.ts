// The markers of CommonMark's container blocks (block quotes and list items): how a line starts one
// and how a line continues an open one, read off the shared line cursor after commonmark.js.
import { BULLET_MARKER, matchAt, ORDERED_MARKER } from './block-syntax.ts';
import { CODE_INDENT, type LineCursor } from './line-cursor.ts';
import type { OpenBlock } from './open-block.ts';

const TAB = 9;
const SPACE = 32;
const GREATER_THAN = 62;

/** A list item marker read by {@link startListItem}. */
export interface ListItemStart {
  /** `*`, `+`, `-`, or the ordered delimiter `.`/`)` prefixed with `1`. */
  marker: string;
  /** Column of the marker, relative to the enclosing container. */
  markerOffset: number;
  /** Columns from the marker to the item's content. */
  padding: number;
}

/**
 * Consumes a block quote marker `>` at the cursor's next non-space character, and one optional space
 * or tab (column) after it.
 * @see https://spec.commonmark.org/0.31.2/#block-quotes
 */
export function consumeBlockQuoteMarker(cursor: LineCursor): void {
  cursor.advanceNextNonspace();
  cursor.advanceOffset(1, false);
  if (cursor.isSpaceOrTab(cursor.offset)) cursor.advanceOffset(1, true);
}

/** Whether the line continues an open block quote; consumes its marker when it does. */
export function continuesBlockQuote(cursor: LineCursor): boolean {
  if (cursor.indented || cursor.line.charCodeAt(cursor.nextNonspace) !== GREATER_THAN) return false;
  consumeBlockQuoteMarker(cursor);
  return true;
}

/** Whether the line continues the open list `item`; consumes its indentation when it does. */
export function continuesListItem(cursor: LineCursor, item: OpenBlock): boolean {
  const required = item.markerOffset + item.padding;
  if (cursor.blank) {
    if (!item.hasChild) return false;
    cursor.advanceOffset(Math.min(cursor.indent, required), true);
    return true;
  }
  if (cursor.indent >= required) {
    cursor.advanceOffset(required, true);
    return true;
  }
  return false;
}

/**
 * Reads a list item marker at the cursor's next non-space character and consumes it with the spaces
 * that belong to it; returns null (cursor untouched) when the line does not start a list item.
 * `interrupt` tells whether the item would interrupt a paragraph, which only an ordered list starting
 * with 1, or an item not starting with a blank line, may do.
 * @see https://spec.commonmark.org/0.31.2/#list-items
 */
export function startListItem(cursor: LineCursor, interrupt: boolean): ListItemStart | null {
  if (cursor.indent >= CODE_INDENT) return null;
  const line = cursor.line;
  const at = cursor.nextNonspace;
  let marker: string;
  let width: number;
  const bullet = matchAt(BULLET_MARKER, line, at);
  if (bullet) {
    marker = bullet[0];
    width = 1;
  } else {
    const ordered = matchAt(ORDERED_MARKER, line, at);
    // An ordered list can interrupt a paragraph only when it starts with 1.
    if (!ordered || (interrupt && Number(ordered[1]) !== 1)) return null;
    marker = `1${ordered[2]}`;
    width = ordered[0].length;
  }
  const next = line.charCodeAt(at + width);
  if (!(Number.isNaN(next) || next === TAB || next === SPACE)) return null;
  // A list item that interrupts a paragraph must not start with a blank line.
  if (interrupt && !/[^ \t]/.test(line.slice(at + width))) return null;

  const markerOffset = cursor.indent;
  cursor.advanceNextNonspace();
  cursor.advanceOffset(width, true);
  const spacesStartColumn = cursor.column;
  const spacesStartOffset = cursor.offset;
  do {
    cursor.advanceOffset(1, true);
  } while (cursor.column - spacesStartColumn < 5 && cursor.isSpaceOrTab(cursor.offset));
  const blankItem = cursor.offset >= line.length;
  const spacesAfterMarker = cursor.column - spacesStartColumn;
  let padding: number;
  if (spacesAfterMarker >= 5 || spacesAfterMarker < 1 || blankItem) {
    padding = width + 1;
    cursor.column = spacesStartColumn;
    cursor.offset = spacesStartOffset;
    cursor.partiallyConsumedTab = false;
    if (cursor.isSpaceOrTab(cursor.offset)) cursor.advanceOffset(1, true);
  } else {
    padding = width + spacesAfterMarker;
  }
  return { marker, markerOffset, padding };
}
