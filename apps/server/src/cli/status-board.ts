/** A text stream the board writes to: a terminal (`isTTY`, `columns`) or anything else. */
export interface BoardStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * What `mci chat` shows while a turn runs: one-off lines (answer text, an output) and one status
 * line per process. On a terminal the status lines stay at the bottom and change in place; elsewhere
 * every change is a plain line, so a log reads top to bottom.
 */
export interface StatusBoard {
  /** Prints a line above the status lines. */
  note(line: string): void;
  /** Sets the status line of `key` (a new key adds a line). */
  set(key: number, line: string): void;
  /** Leaves the status lines as they are and starts a new set below them. */
  done(): void;
}

/** A {@link StatusBoard} on `stream`; in-place updates when it is a terminal. */
export function createStatusBoard(stream: BoardStream): StatusBoard {
  const lines = new Map<number, string>();
  if (!stream.isTTY) {
    return {
      note: (line) => stream.write(`${line}\n`),
      set(key, line) {
        if (lines.get(key) === line) return;
        lines.set(key, line);
        stream.write(`${line}\n`);
      },
      done: () => lines.clear(),
    };
  }
  let drawn = 0;
  const erase = () => {
    // Up to the first status line, then clear everything below it.
    if (drawn > 0) stream.write(`\x1b[${drawn}F`);
    stream.write('\x1b[0J');
    drawn = 0;
  };
  const draw = () => {
    const width = stream.columns || 120;
    for (const line of lines.values())
      stream.write(`${line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line}\n`);
    drawn = lines.size;
  };
  return {
    note(line) {
      erase();
      stream.write(`${line}\n`);
      draw();
    },
    set(key, line) {
      if (lines.get(key) === line) return;
      lines.set(key, line);
      erase();
      draw();
    },
    done() {
      drawn = 0;
      lines.clear();
    },
  };
}
