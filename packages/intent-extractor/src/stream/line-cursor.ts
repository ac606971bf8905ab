const TAB = 9;
const SPACE = 32;

/** Columns from which a line is indented code. @see https://spec.commonmark.org/0.31.2/#indented-code-blocks */
export const CODE_INDENT = 4;

/**
 * A position in the current line, counted both in characters (`offset`) and in columns (`column`),
 * where a tab advances to the next multiple of 4 and may be consumed only in part (a block quote
 * marker's optional space, a list item's indentation), after commonmark.js.
 *
 * @see https://spec.commonmark.org/0.31.2/#tabs
 */
export class LineCursor {
  line = '';
  offset = 0;
  column = 0;
  /** Set by {@link findNextNonspace}: the first character that is not a space or tab. */
  nextNonspace = 0;
  nextNonspaceColumn = 0;
  /** Columns from the cursor to `nextNonspace`. */
  indent = 0;
  indented = false;
  /** Whether the rest of the line is spaces and tabs only. */
  blank = false;
  /** Whether the tab at `offset` is already partly consumed. */
  partiallyConsumedTab = false;

  reset(line: string): void {
    this.line = line;
    this.offset = 0;
    this.column = 0;
    this.blank = false;
    this.partiallyConsumedTab = false;
  }

  isSpaceOrTab(offset: number): boolean {
    const code = this.line.charCodeAt(offset);
    return code === SPACE || code === TAB;
  }

  findNextNonspace(): void {
    const line = this.line;
    let i = this.offset;
    let columns = this.column;
    while (i < line.length) {
      const code = line.charCodeAt(i);
      if (code === SPACE) columns++;
      else if (code === TAB) columns += 4 - (columns % 4);
      else break;
      i++;
    }
    this.blank = i >= line.length;
    this.nextNonspace = i;
    this.nextNonspaceColumn = columns;
    this.indent = columns - this.column;
    this.indented = this.indent >= CODE_INDENT;
  }

  advanceNextNonspace(): void {
    this.offset = this.nextNonspace;
    this.column = this.nextNonspaceColumn;
    this.partiallyConsumedTab = false;
  }

  /** Advances by `count` characters, or by `count` columns when `columns` (a tab may be split). */
  advanceOffset(count: number, columns: boolean): void {
    const line = this.line;
    while (count > 0 && this.offset < line.length) {
      if (line.charCodeAt(this.offset) === TAB) {
        const charsToTab = 4 - (this.column % 4);
        if (columns) {
          this.partiallyConsumedTab = charsToTab > count;
          const advance = Math.min(charsToTab, count);
          this.column += advance;
          if (!this.partiallyConsumedTab) this.offset++;
          count -= advance;
        } else {
          this.partiallyConsumedTab = false;
          this.column += charsToTab;
          this.offset++;
          count--;
        }
      } else {
        this.partiallyConsumedTab = false;
        this.offset++;
        this.column++;
        count--;
      }
    }
  }

  /** The rest of the line as content: the unconsumed columns of a split tab become spaces. */
  rest(): string {
    if (!this.partiallyConsumedTab) return this.line.slice(this.offset);
    return ' '.repeat(4 - (this.column % 4)) + this.line.slice(this.offset + 1);
  }
}
