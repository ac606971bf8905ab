import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { type Answer, request } from './http.ts';
import type { Json } from './serve-process.ts';
import { until } from './until.ts';

export { until };

// What the store-fault suites share: a small tmpfs to fill or take away, a private PostgreSQL to
// restart, the HTTP calls they make, and the check that every process a server acknowledged is
// stored with its outputs after a restart.

const run = promisify(execFile);

/** An HTTP answer: status and JSON body. */
/** `GET /healthz`. */
export const healthz = (url: string) => request(url, 'GET', '/healthz');

/**
 * The code of a process that outputs one string of `bytes` characters tagged `tag`, and that string,
 * so a check after a restart can compare the stored output with what was sent.
 */
export function outputProgram(tag: string, bytes: number): { code: string; output: string } {
  const output = `${tag}:`.padEnd(bytes, 'x');
  return { code: `output(${JSON.stringify(`${tag}:`)}.padEnd(${bytes}, 'x'))`, output };
}

/**
 * The answers of `POST /processes` a suite sent: each must be 201 (acknowledged: the process is
 * durable) or 503 `STORE_UNAVAILABLE`, never anything else.
 */
export class CreateLog {
  /** Acknowledged processes: pid and the output its program writes. */
  readonly acknowledged = new Map<number, string>();
  readonly statuses: number[] = [];
  readonly tag: string;
  #next = 0;

  /** `tag` starts the output of every process created (with a count). */
  constructor(tag: string) {
    this.tag = tag;
  }

  /**
   * Creates a process that outputs a string of `bytes` characters (`block`: answered once it ran)
   * and records the answer.
   */
  async create(url: string, bytes: number, block = true): Promise<Answer> {
    const { code, output } = outputProgram(`${this.tag}-${++this.#next}`, bytes);
    const answer = await request(url, 'POST', '/processes', { code, block });
    this.statuses.push(answer.status);
    if (answer.status === 201) {
      expect(this.acknowledged.has(answer.body.pid), `pid ${answer.body.pid} given twice`).toBe(false);
      this.acknowledged.set(answer.body.pid as number, output);
    } else expect(answer).toMatchObject({ status: 503, body: { code: 'STORE_UNAVAILABLE' } });
    return answer;
  }

  /**
   * Creates processes (`bytes` of output each, `loops` at a time) until `stop` is called, which
   * resolves once the loops are done or rejects with the first unexpected answer. After a refusal a
   * loop waits 50 ms, so a server that refuses at once is not flooded.
   */
  keepCreating(url: string, bytes: number, loops = 1): { stop(): Promise<void> } {
    let stopped = false;
    const running = Promise.all(
      Array.from({ length: loops }, async () => {
        while (!stopped) if ((await this.create(url, bytes)).status !== 201) await sleep(50);
      }),
    );
    running.catch(() => {}); // reported by stop()
    return {
      async stop() {
        stopped = true;
        await running;
      },
    };
  }

  /** How many creates were refused with 503. */
  get refused(): number {
    return this.statuses.filter((status) => status === 503).length;
  }
}

/** Every process the server at `url` lists, page after page. */
async function allProcesses(url: string): Promise<Json[]> {
  const processes: Json[] = [];
  let cursor: string | undefined;
  do {
    const query = `/processes?limit=100${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { body } = await request(url, 'GET', query);
    processes.push(...(body.items as Json[]));
    cursor = body.nextCursor as string | undefined;
  } while (cursor !== undefined);
  return processes;
}

/**
 * Checks on the server at `url` (started again on the database of the one that acknowledged them)
 * that every process of `log` is stored, idle, successful and has its output; that no process stays
 * queued or running; and that a new process gets a pid above every pid seen.
 */
export async function expectAcknowledgedStored(url: string, log: CreateLog): Promise<void> {
  const listed = await until(
    'every process idle after the restart',
    () => allProcesses(url),
    (processes) => processes.every((p) => p.state === 'idle'),
  );
  for (const [pid, output] of log.acknowledged) {
    const snapshot = await request(url, 'GET', `/processes/${pid}`);
    expect(snapshot, `process ${pid}`).toMatchObject({
      status: 200,
      body: { state: 'idle', status: 'success' },
    });
    const result = await request(url, 'GET', `/processes/${pid}/output`);
    expect(result.body.outputs, `outputs of process ${pid}`).toEqual([output]);
  }
  const seen = Math.max(0, ...log.acknowledged.keys(), ...listed.map((p) => p.pid as number));
  const next = await request(url, 'POST', '/processes', { code: 'output(1)', autorun: false });
  expect(next.status).toBe(201);
  expect(next.body.pid).toBeGreaterThan(seen);
}

/**
 * Why a tmpfs cannot be mounted here (not root, no CAP_SYS_ADMIN), or `undefined` when it can: the
 * suites that fill or take away a file system skip with this reason.
 */
export async function tmpfsUnavailable(): Promise<string | undefined> {
  try {
    await using _ = await mountTmpfs(1);
    return undefined;
  } catch (error) {
    return `mount -t tmpfs is not permitted here (${(error as Error).message.trim()}); these tests need root`;
  }
}

/** A tmpfs of `sizeMb` MiB mounted on a new temporary directory; disposing unmounts it and removes the directory. */
export async function mountTmpfs(sizeMb: number): Promise<{ dir: string } & AsyncDisposable> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-tmpfs-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    async [Symbol.asyncDispose]() {
      // A server left open by a failed test still holds its files: detach the mount anyway.
      await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A PostgreSQL of its own (initdb in a temporary directory, trust auth, a free port on 127.0.0.1). */
export interface PrivatePostgres extends AsyncDisposable {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string;
  /** `pg_ctl stop -m fast` (connections are ended: 57P01). */
  stop(): Promise<void>;
  /** `pg_ctl start`, waiting until it accepts connections. */
  start(): Promise<void>;
}

/**
 * Creates and starts a private PostgreSQL 15 as the `postgres` user (the tests run as root); disposing
 * stops it and deletes its directory, also after a failure.
 */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-pg-'));
  const data = join(dir, 'data');
  const { uid, gid } = await postgresUser();
  chownSync(dir, uid, gid);
  const port = await freePort();
  const pgCtl = (...args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, '-D', data, ...args], { timeout: 60_000 });
  const start = async () => {
    await pgCtl(
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      join(dir, 'log'),
      '-w',
      'start',
    );
  };
  const stop = async () => {
    await pgCtl('-m', 'fast', '-w', 'stop');
  };
  try {
    await run(
      'runuser',
      ['-u', 'postgres', '--', `${PG_BIN}/initdb`, '-D', data, '-A', 'trust', '-U', 'postgres'],
      {
        timeout: 120_000,
      },
    );
    await start();
  } catch (error) {
    await stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async [Symbol.asyncDispose]() {
      await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A TCP port free on 127.0.0.1 just now (PostgreSQL takes a port number, not 0). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
