import type { ServerEvent } from '@mci/protocol';

/** What an MCI stream ends with: its processes (in intent order) and the response pipe `text`. */
export interface TurnStreamResult {
  streamId: string;
  processes: ReadonlyArray<{ pid: number }>;
  text: string;
}

/** One MCI stream (one model answer), as `@mci/client`'s `ChatStream` offers it. */
export interface TurnStream {
  readonly streamId: string;
  /** Pushes the next piece of model output; pieces go out in call order. */
  write(text: string): unknown;
  /** Ends the stream; `result` follows once its processes are idle. */
  end(): Promise<unknown>;
  readonly result: Promise<TurnStreamResult>;
  /**
   * Stops waiting for blocks not run yet (a stream opened with `autorun: false`), so `result` follows
   * once the running ones end. Hosts without manual runs leave it out.
   */
  stopWaiting?(): void;
}

/**
 * Where the loop runs the model's blocks: an `MciClient` from `@mci/client` fits as it is; the server
 * passes its process manager behind the same two methods.
 */
export interface StreamHost {
  /**
   * Opens a stream whose events (`intent`, `process`, `output`, `log`, `tool`, `stream.result`) go to
   * `onEvent`. `autorun: false` (a host that supports it: the server's own) creates each block's
   * process idle, waiting for a `run` signal; `result` then follows once every block has run and ended.
   */
  openStream(options: { ref?: string; autorun?: boolean; onEvent: (event: ServerEvent) => void }): TurnStream;
  /** Kills a process (`signal(pid, 'kill')`); may reject when it is already idle. */
  signal(pid: number, signal: 'kill'): Promise<unknown>;
}
