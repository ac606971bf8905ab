import type { OutputStream } from './io.ts';

/**
 * Progress of a long wait on stderr: a spinner with a live line on a terminal; on anything else
 * (a pipe, a CI log) plain lines, one per change, so logs stay readable.
 */
export interface Progress {
  /** True on a terminal (a live line), false when printing plain lines. */
  readonly live: boolean;
  /** Sets the status text (redrawn on a terminal; printed as a line elsewhere when it changed). */
  update(text: string): void;
  /** Prints a line to `to` above the live line. */
  line(text: string, to: OutputStream): void;
  /** Removes the live line. */
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A {@link Progress} on `stream` (stderr); `live` @default `stream.isTTY` */
export function createProgress(stream: OutputStream, live = stream.isTTY === true): Progress {
  let text = '';
  let frame = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const clear = () => stream.write('\r\x1b[2K');
  const draw = () => {
    clear();
    stream.write(`${FRAMES[frame++ % FRAMES.length]} ${text}`);
  };
  return {
    live,
    update(next) {
      if (!live) {
        if (next !== text) stream.write(`${next}\n`);
        text = next;
        return;
      }
      text = next;
      timer ??= setInterval(draw, 80);
      timer.unref();
      draw();
    },
    line(line, to) {
      if (live && timer) clear();
      to.write(line.endsWith('\n') ? line : `${line}\n`);
      if (live && timer) draw();
    },
    stop() {
      if (timer) {
        clearInterval(timer);
        timer = undefined;
        clear();
      }
    },
  };
}
