import { Worker } from 'node:worker_threads';

/** A background thread that moves committed WAL pages into the database file. */
export interface Checkpointer {
  /** Stops the thread (after its current checkpoint). Idempotent. */
  stop(): Promise<void>;
}

// The worker's code (CommonJS, evaluated): its own connection, a PASSIVE checkpoint every interval.
// A passive checkpoint never blocks the server's writes; it copies what no reader still needs.
const SOURCE = `
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.file, { timeout: 1000 });
const checkpoint = () => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/**
 * Starts checkpointing the WAL of `file` on a worker thread, every `intervalMs`, so the server's
 * thread never waits for the checkpoint's `fsync` (with `synchronous = NORMAL`, commits themselves do
 * not sync; checkpoints do). The server's connection turns automatic checkpoints off.
 * @see https://sqlite.org/wal.html#checkpointing
 */
export function startCheckpointer(
  file: string,
  intervalMs: number,
  onError: (message: string) => void,
): Checkpointer {
  const worker = new Worker(SOURCE, { eval: true, workerData: { file, intervalMs } });
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) onError(message.error);
  });
  worker.on('error', (error) => onError(error.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        // Keep the process alive until the thread is done (it is unref'd while it idles).
        worker.ref();
        worker.postMessage('stop');
        await exited;
      })();
      return stopping;
    },
  };
}
