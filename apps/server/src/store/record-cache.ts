import type { RunUpdate, StoredProcess, StoredRun } from '../processes/process-store.ts';

/** A cached value and its approximate size in bytes. */
interface Sized<T> {
  value: T;
  bytes: number;
}

/** What the cache holds of one process: its record and runs, each only when known in full. */
interface Entry {
  record: Sized<StoredProcess> | undefined;
  runs: Map<number, Sized<StoredRun>>;
}

/** Fixed overhead counted for a record or a run, in bytes (strings count two bytes a character). */
const OVERHEAD = 256;

/**
 * The recently used process records and runs of the SQLite store, kept equal to what the database
 * holds (every write goes to both), so the manager's hot reads (a snapshot after each state change,
 * the result when a process ends) need no SQL and do not force the pending batch to commit. Least
 * recently used processes go first, past `maxProcesses` or about `maxBytes`.
 */
export class RecordCache {
  readonly #entries = new Map<number, Entry>();
  readonly #maxProcesses: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxProcesses: number, maxBytes: number) {
    this.#maxProcesses = maxProcesses;
    this.#maxBytes = maxBytes;
  }

  getProcess(pid: number): StoredProcess | undefined {
    const record = this.#touch(pid)?.record?.value;
    return record && { ...record };
  }

  getRun(pid: number, run: number): StoredRun | undefined {
    const found = this.#touch(pid)?.runs.get(run)?.value;
    return found && { ...found, outputs: [...found.outputs] };
  }

  /**
   * Whether run `run` of process `pid` is cached (so it was stored before); `undefined` when the
   * cache knows nothing of the process.
   */
  hasRun(pid: number, run: number): boolean | undefined {
    const entry = this.#entries.get(pid);
    if (!entry?.record) return undefined;
    return entry.runs.has(run);
  }

  /** A record known in full (just written, or just read from the database). */
  putProcess(record: StoredProcess): void {
    const entry = this.#entry(record.pid);
    this.#grow(-(entry.record?.bytes ?? 0));
    entry.record = { value: { ...record }, bytes: OVERHEAD + record.code.length * 2 };
    this.#grow(entry.record.bytes);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    const record = this.#entries.get(pid)?.record?.value;
    if (!record) return;
    record.state = update.state;
    record.status = update.status;
    record.runs = update.runs;
  }

  /** A run known in full (just inserted, or just read from the database), its outputs `outputBytes` big. */
  putRun(run: StoredRun, outputBytes: number): void {
    const entry = this.#entry(run.pid);
    this.#grow(-(entry.runs.get(run.run)?.bytes ?? 0));
    const bytes = OVERHEAD + outputBytes + (run.stdout.length + run.stderr.length) * 2;
    entry.runs.set(run.run, { value: { ...run, outputs: [...run.outputs] }, bytes });
    this.#grow(bytes);
  }

  updateRun(pid: number, run: number, update: RunUpdate): void {
    const found = this.#entries.get(pid)?.runs.get(run);
    if (found) Object.assign(found.value, update);
  }

  appendOutput(pid: number, run: number, value: unknown, bytes: number): void {
    const found = this.#entries.get(pid)?.runs.get(run);
    if (!found) return;
    found.value.outputs.push(value);
    found.bytes += bytes;
    this.#grow(bytes);
  }

  appendLog(pid: number, run: number, stream: 'stdout' | 'stderr', text: string): void {
    const found = this.#entries.get(pid)?.runs.get(run);
    if (!found) return;
    found.value[stream] += text;
    found.bytes += text.length * 2;
    this.#grow(text.length * 2);
  }

  deleteProcess(pid: number): void {
    const entry = this.#entries.get(pid);
    if (!entry) return;
    this.#entries.delete(pid);
    this.#grow(-sizeOf(entry));
  }

  #touch(pid: number): Entry | undefined {
    const entry = this.#entries.get(pid);
    if (entry) {
      // Map order is insertion order: re-inserting makes it the most recently used.
      this.#entries.delete(pid);
      this.#entries.set(pid, entry);
    }
    return entry;
  }

  #entry(pid: number): Entry {
    let entry = this.#touch(pid);
    if (!entry) {
      entry = { record: undefined, runs: new Map() };
      this.#entries.set(pid, entry);
    }
    return entry;
  }

  /** Counts `delta` bytes, then drops least recently used entries past the limits (never the newest). */
  #grow(delta: number): void {
    this.#bytes += delta;
    if (delta <= 0 && this.#entries.size <= this.#maxProcesses) return;
    for (const [pid, entry] of this.#entries) {
      if (this.#entries.size <= 1) return;
      if (this.#entries.size <= this.#maxProcesses && this.#bytes <= this.#maxBytes) return;
      this.#entries.delete(pid);
      this.#bytes -= sizeOf(entry);
    }
  }
}

function sizeOf(entry: Entry): number {
  let bytes = entry.record?.bytes ?? 0;
  for (const run of entry.runs.values()) bytes += run.bytes;
  return bytes;
}
