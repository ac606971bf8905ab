import type { MciClient } from '@mci/client';

/** How many code requests run at once. */
const CONCURRENCY = 6;

/**
 * The code of processes, fetched on demand (`GET /processes/:pid/code`) and kept: a process's code
 * never changes. Used by the Processes page's text filter, since snapshots do not carry code.
 */
export class CodeCache {
  readonly #code = new Map<number, string>();
  readonly #wanted: number[] = [];
  readonly #requested = new Set<number>();
  #active = 0;
  #client: MciClient;
  #onLoaded: () => void;

  constructor(client: MciClient, onLoaded: () => void) {
    this.#client = client;
    this.#onLoaded = onLoaded;
  }

  /** The code of `pid`, if loaded; asks for it otherwise. */
  get(pid: number): string | undefined {
    const code = this.#code.get(pid);
    if (code === undefined && !this.#requested.has(pid)) {
      this.#requested.add(pid);
      this.#wanted.push(pid);
      this.#pump();
    }
    return code;
  }

  #pump(): void {
    while (this.#active < CONCURRENCY && this.#wanted.length > 0) {
      const pid = this.#wanted.shift()!;
      this.#active++;
      this.#client
        .getCode(pid)
        .then((code) => {
          this.#code.set(pid, code);
          this.#onLoaded();
        })
        .catch(() => this.#code.set(pid, ''))
        .finally(() => {
          this.#active--;
          this.#pump();
        });
    }
  }
}
