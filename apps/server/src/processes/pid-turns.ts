/**
 * Runs asynchronous work on processes one piece after another per pid: a piece starts once the one
 * before it for that pid has settled (resolved or rejected), so it reads what that one left. Pieces
 * for different pids run independently.
 */
export class PidTurns {
  /** The last piece queued for each pid, until it settles. */
  readonly #last = new Map<number, Promise<unknown>>();

  /** Runs `work` after the pieces queued for `pid` before it; resolves or rejects as `work` does. */
  async run<T>(pid: number, work: () => Promise<T>): Promise<T> {
    const current = (this.#last.get(pid) ?? Promise.resolve()).then(work, work);
    this.#last.set(pid, current);
    try {
      return await current;
    } finally {
      if (this.#last.get(pid) === current) this.#last.delete(pid);
    }
  }
}
