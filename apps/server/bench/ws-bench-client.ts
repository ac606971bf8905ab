// The WebSocket client and load driver of the server benchmarks.
import type { ServerMessage } from '@mci/protocol';
import WebSocket from 'ws';
import type { ServerOptions } from '../src/server.ts';

/**
 * Server options for a load test: port 0, no logs, and room for one principal to drive the server far
 * past the default request budget and queue.
 */
export const LOAD_TEST_SERVER = {
  port: 0,
  logLevel: 'silent',
  limits: { rateLimitPerSecond: 1_000_000 },
  maxQueue: 100_000,
} satisfies Partial<ServerOptions>;

/** A bare protocol client: `run(code)` resolves when the process is idle; `kill` when it is canceled. */
export class BenchClient {
  private readonly socket: WebSocket;
  private nextId = 1;
  private readonly replies = new Map<number, (pid: number) => void>();
  /** Waiters of `process.create` requests by request id, moved to `waiters` by pid on the reply. */
  private readonly creating = new Map<number, { state: string; resolve: () => void }>();
  private readonly waiters = new Map<number, { state: string; resolve: () => void }>();

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as ServerMessage;
      if (message.type === 'reply' && typeof message.id === 'number') {
        const result = message.result as { process?: { pid: number } };
        // Set synchronously: the process's events may follow in the same read, before any microtask.
        const creating = this.creating.get(message.id);
        if (creating && result.process) this.waiters.set(result.process.pid, creating);
        this.creating.delete(message.id);
        this.replies.get(message.id)?.(result.process?.pid ?? 0);
        this.replies.delete(message.id);
      } else if (message.type === 'process') {
        const waiter = this.waiters.get(message.pid);
        if (waiter && waiter.state === message.state) {
          this.waiters.delete(message.pid);
          waiter.resolve();
        }
      }
    });
  }

  static async open(url: string): Promise<BenchClient> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new BenchClient(socket);
  }

  private request(message: Record<string, unknown>): Promise<number> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.replies.set(id, resolve);
      this.socket.send(JSON.stringify({ ...message, id }));
    });
  }

  /** Creates a process and resolves once it reaches `state` (the reply precedes every event of it). */
  async create(code: string, state = 'idle', extra: Record<string, unknown> = {}): Promise<number> {
    const reached = new Promise<void>((resolve) => this.creating.set(this.nextId, { state, resolve }));
    const pid = await this.request({ type: 'process.create', code, ...extra });
    await reached;
    return pid;
  }

  async kill(pid: number): Promise<void> {
    const idle = new Promise<void>((resolve) => {
      this.waiters.set(pid, { state: 'idle', resolve });
    });
    await this.request({ type: 'process.signal', pid, signal: 'kill' });
    await idle;
  }

  close(): void {
    this.socket.close();
  }
}

/**
 * `clients` loops, each running `job` back to back for `durationMs` (`job` gets the loop's index);
 * the latency samples (ms), the seconds the loops took and jobs per second.
 */
export async function loadTest(
  clients: number,
  durationMs: number,
  job: (client: number) => Promise<unknown>,
) {
  const samples: number[] = [];
  const begin = performance.now();
  const end = begin + durationMs;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < end) {
        const t = performance.now();
        await job(client);
        samples.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  return { samples, seconds, perSecond: samples.length / seconds };
}
