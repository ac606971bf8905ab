import type { Socket } from 'node:net';

/** What the server does with a new socket: serve it, answer only `/healthz` on it, or close it. */
export type Admission = 'serve' | 'health' | 'refuse';

/** Sockets past the caps that may still ask `GET /healthz`. */
export const HEALTH_RESERVE = 8;

/**
 * Counts the server's open sockets, in all and by remote address, and admits new ones: under both
 * caps a socket is served; past either (one address holding its share, or the server full) it may only
 * ask `/healthz`, up to {@link HEALTH_RESERVE} such sockets; past that it is closed at once.
 */
export class ConnectionCaps {
  readonly #max: number;
  readonly #maxPerAddress: number;
  readonly #byAddress = new Map<string, number>();
  #open = 0;
  #healthOnly = 0;

  constructor(maxConnections: number, maxPerAddress: number) {
    this.#max = maxConnections;
    this.#maxPerAddress = maxPerAddress;
  }

  /** Decides for a new `socket` and counts it until it closes. */
  admit(socket: Socket): Admission {
    const address = socket.remoteAddress ?? '';
    const fromAddress = this.#byAddress.get(address) ?? 0;
    let admission: Admission = 'serve';
    if (this.#open >= this.#max || fromAddress >= this.#maxPerAddress)
      admission = this.#healthOnly < HEALTH_RESERVE ? 'health' : 'refuse';
    if (admission === 'refuse') return admission;
    const health = admission === 'health';
    if (health) this.#healthOnly++;
    else {
      this.#open++;
      this.#byAddress.set(address, fromAddress + 1);
    }
    socket.once('close', () => {
      if (health) {
        this.#healthOnly--;
        return;
      }
      this.#open--;
      const left = (this.#byAddress.get(address) ?? 1) - 1;
      if (left === 0) this.#byAddress.delete(address);
      else this.#byAddress.set(address, left);
    });
    return admission;
  }
}
