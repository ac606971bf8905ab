import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/index.ts';
import { createLogger } from '../src/logger.ts';
import { greetToolDir } from './support/greet-tools.ts';
import {
  CreateLog,
  expectAcknowledgedStored,
  healthz,
  mountTmpfs,
  tmpfsUnavailable,
  until,
} from './support/store-faults.ts';

// The SQLite store when the file system under a running server fails: the disk fills up, the
// database file is deleted. The server stays up, answers 503 STORE_UNAVAILABLE (never 500) while it
// cannot write, comes back by itself once it can, and a restart on the same file finds every process
// it acknowledged (201), with its outputs, and hands out no pid twice.
//
// A read-only remount (`mount -o remount,ro`) cannot be staged here: Linux refuses it with EBUSY while
// SQLite holds its files open for writing, so the shutdown while writes are refused is tested on a
// full disk.

const tools = greetToolDir('mci-sqlite-faults-', 'Hello!');
const noTmpfs = await tmpfsUnavailable();

/** Outputs of 50 KB fill the 3 MB left on the disk in about 60 processes. */
const OUTPUT_BYTES = 50_000;

/**
 * A server on the SQLite file `db`; its error log lines are collected in `errors`, and the first ones
 * printed if the test fails.
 */
function start(db: string, onTestFailed: (fn: () => void) => void, errors: string[] = []) {
  onTestFailed(() =>
    console.error(`server log (${db}), first 10 of ${errors.length} lines:\n${errors.slice(0, 10).join('')}`),
  );
  return createServer({
    port: 0,
    file: tools.file,
    db,
    concurrency: 2,
    retention: false,
    limits: { rateLimitPerSecond: 100_000 },
    logger: createLogger({
      level: 'error',
      destination: { write: (line: string) => void errors.push(line) },
    }),
  });
}

/**
 * A tmpfs of 8 MiB holding a 5 MiB `filler` file (deleting it frees the disk) and the database path.
 * The space freed must exceed what the database filled: the WAL then holds every page written since
 * the last checkpoint, and the checkpoint that lets SQLite reuse the WAL needs as much room again in
 * the database file.
 */
async function smallDisk() {
  const disk = await mountTmpfs(8);
  const filler = join(disk.dir, 'filler');
  writeFileSync(filler, Buffer.alloc(5 * 1024 * 1024, 1));
  return { ...disk, db: join(disk.dir, 'mci.db'), free: () => rmSync(filler) };
}

/**
 * Creates processes with 50 KB outputs, two at a time, until a create is refused: the disk is full.
 * Three times what the disk holds, all acknowledged, means the store acknowledged writes it lost.
 */
async function fillDisk(url: string, log: CreateLog): Promise<void> {
  while (log.refused === 0) {
    if (log.statuses.length >= 200) {
      const health = await healthz(url);
      throw new Error(
        `${log.statuses.length} creates of 50 KB outputs on a 3 MB disk were all acknowledged (201), none refused; /healthz ${health.status}`,
      );
    }
    await Promise.all([log.create(url, OUTPUT_BYTES), log.create(url, OUTPUT_BYTES)]);
  }
}

describe('SQLite store on a failing file system', { timeout: 120_000 }, () => {
  it('disk full: creates get 201 or 503 (never 500), /healthz 503 until space is freed, a restart finds every acknowledged process', async (ctx) => {
    if (noTmpfs) ctx.skip(noTmpfs);
    await using disk = await smallDisk();
    const log = new CreateLog('full');
    {
      await using server = await start(disk.db, ctx.onTestFailed);
      await fillDisk(server.url, log);
      const unhealthy = await until(
        '/healthz 503 while the disk is full',
        () => healthz(server.url),
        (a) => a.status === 503,
      );
      expect(unhealthy.body).toMatchObject({
        status: 'store_unavailable',
        message: expect.stringContaining(disk.db),
      });
      // Creates go on being answered while the disk stays full.
      for (let i = 0; i < 4; i++) await log.create(server.url, OUTPUT_BYTES);
      expect(log.refused).toBeGreaterThan(1);

      disk.free();
      await until(
        '/healthz 200 once space is freed',
        () => healthz(server.url),
        (a) => a.status === 200,
      );
      for (let i = 0; i < 3; i++) expect((await log.create(server.url, OUTPUT_BYTES)).status).toBe(201);
    }
    await using again = await start(disk.db, ctx.onTestFailed);
    await expectAcknowledgedStored(again.url, log);
  });

  it('disk full at shutdown: close resolves and reports the writes it could not commit; a restart finds every acknowledged process', async (ctx) => {
    if (noTmpfs) ctx.skip(noTmpfs);
    await using disk = await smallDisk();
    const log = new CreateLog('closed-full');
    const errors: string[] = [];
    const server = await start(disk.db, ctx.onTestFailed, errors);
    try {
      await fillDisk(server.url, log);
      await until(
        '/healthz 503 while the disk is full',
        () => healthz(server.url),
        (a) => a.status === 503,
      );
    } finally {
      await server.close();
    }
    expect(errors.join('')).toMatch(/writes could not be committed/);

    disk.free();
    await using again = await start(disk.db, ctx.onTestFailed);
    await expectAcknowledgedStored(again.url, log);
  });

  it('database file deleted while serving: /healthz 503 naming the file within seconds, a restart finds every acknowledged process', {
    timeout: 90_000,
  }, async (ctx) => {
    const db = join(tools.dir, 'deleted', 'mci.db');
    const log = new CreateLog('deleted');
    {
      await using server = await start(db, ctx.onTestFailed);
      for (let i = 0; i < 5; i++) expect((await log.create(server.url, 1000)).status).toBe(201);
      // Creates go on while the file disappears.
      const creating = log.keepCreating(server.url, 1000);
      try {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
        const unhealthy = await until(
          '/healthz 503 after the file was deleted',
          () => healthz(server.url),
          (a) => a.status === 503,
          { timeoutMs: 15_000 },
        );
        expect(unhealthy.body).toMatchObject({
          status: 'store_unavailable',
          message: expect.stringContaining(db),
        });
      } finally {
        await creating.stop();
      }
      expect(log.acknowledged.size).toBeGreaterThanOrEqual(5);
      expect((await log.create(server.url, 1000)).status).toBe(503);
    }
    expect(existsSync(db)).toBe(true);
    await using again = await start(db, ctx.onTestFailed);
    await expectAcknowledgedStored(again.url, log);
  });
});
