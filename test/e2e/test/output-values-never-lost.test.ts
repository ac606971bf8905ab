import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeOutputValue } from '@mci/protocol';
import { cloneableValue } from '@mci/test-support';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// Every value output() accepts reaches every interface in one JSON encoding and comes back exactly
// (decodeOutputValue): the WebSocket event, GET /output, GET /runs/:n, a `block: true` create, and the
// store read again by a new server on the same database. `output(10n)` answered 500 on GET /output.

const dir = mkdtempSync(join(tmpdir(), 'mci-output-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** JavaScript source that builds `value` (the values fast-check's `anything` makes, and Errors). */
function toSource(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(toSource).join(', ')}]`;
  if (value instanceof Date) return `new Date(${value.getTime()})`;
  if (value instanceof Map)
    return `new Map([${[...value].map(([k, v]) => `[${toSource(k)}, ${toSource(v)}]`).join(', ')}])`;
  if (value instanceof Set) return `new Set([${[...value].map(toSource).join(', ')}])`;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const items = Array.from(value as unknown as ArrayLike<number | bigint>, toSource);
    return `new ${value.constructor.name}([${items.join(', ')}])`;
  }
  const entries = Object.entries(value as object).map(([k, v]) => `[${JSON.stringify(k)}]: ${toSource(v)}`);
  return `({${entries.join(', ')}})`;
}

const values = cloneableValue({ maxDepth: 3, maxKeys: 4 });

/** These servers run one program at a time, none of them about the pre-run check. */
const SERVER = { concurrency: 1, check: 'off' } as const;

describe('output values', { timeout: 120_000 }, () => {
  it('output(10n) answers 200 on GET /output, GET /runs/1 and a block: true create', async () => {
    await using server = await startServer(SERVER);
    const blocked = await http(server, 'POST', '/processes', { body: { code: 'output(10n)', block: true } });
    expect(blocked.status).toBe(201);
    expect(blocked.body.outputs).toEqual([{ $type: 'bigint', value: '10' }]);
    const output = await http(server, 'GET', `/processes/${blocked.body.pid}/output`);
    expect(output.status).toBe(200);
    expect(decodeOutputValue(output.body.output)).toBe(10n);
    const run = await http(server, 'GET', `/processes/${blocked.body.pid}/runs/1`);
    expect(run.status).toBe(200);
    expect(decodeOutputValue(run.body.outputs[0])).toBe(10n);
  });

  it('the response pipe of a stream shows values JSON lacks in the output encoding', async () => {
    await using server = await startServer(SERVER);
    await using client = await TestClient.open(server.wsUrl);
    await client.ok({ type: 'stream.start', streamId: 'values-1' });
    await client.ok({
      type: 'stream.chunk',
      streamId: 'values-1',
      text: '```ts exec=true\noutput(10n); output(new Map([["k", NaN]]))\n```\n',
    });
    await client.ok({ type: 'stream.end', streamId: 'values-1' });
    const result = await client.waitFor((m) => m.type === 'stream.result');
    const text = result.type === 'stream.result' ? result.text : '';
    const lines = text.split('\n').filter((line) => line.startsWith('output: '));
    expect(lines.map((line) => decodeOutputValue(JSON.parse(line.slice('output: '.length))))).toStrictEqual([
      10n,
      new Map([['k', Number.NaN]]),
    ]);
  });

  it('every value round-trips through WebSocket, HTTP and the store', async () => {
    const db = join(dir, 'values.db');
    const sent: Array<{ pid: number; value: unknown }> = [];
    {
      await using server = await startServer({ ...SERVER, db });
      await using client = await TestClient.open(server.wsUrl);
      const check = async (value: unknown, source = toSource(value)) => {
        const created = await client.ok({ type: 'process.create', code: `output(${source})` });
        const pid = created.result.process.pid;
        const idle = await client.waitIdle(pid);
        expect(idle.status, JSON.stringify(idle.error)).toBe('success');
        const event = client.events().find((e) => e.type === 'output' && e.pid === pid);
        expect(event && decodeOutputValue('value' in event ? event.value : undefined)).toStrictEqual(value);
        const output = await http(server, 'GET', `/processes/${pid}/output`);
        expect(output.status).toBe(200);
        expect(decodeOutputValue(output.body.output)).toStrictEqual(value);
        const run = await http(server, 'GET', `/processes/${pid}/runs/1`);
        expect(decodeOutputValue(run.body.outputs[0])).toStrictEqual(value);
        sent.push({ pid, value });
      };
      await fc.assert(
        fc.asyncProperty(values, (value) => check(value)),
        { numRuns: 30 },
      );
      const special = [
        undefined,
        Number.NaN,
        Infinity,
        -Infinity,
        -0,
        10n,
        new Date(0),
        new Uint8Array([1, 2]),
      ];
      for (const value of special) await check(value);
      // A cycle and a shared object: the same structure comes back.
      const cyclicPid = (
        await client.ok({
          type: 'process.create',
          code: 'const a = { n: 1 }; a.self = a; output([a, new Map([[1, a]]), a])',
        })
      ).result.process.pid;
      await client.waitIdle(cyclicPid);
      const cyclic = client.events().find((e) => e.type === 'output' && e.pid === cyclicPid);
      const decoded = decodeOutputValue(cyclic?.type === 'output' ? cyclic.value : undefined) as [
        { n: number; self: unknown },
        Map<number, unknown>,
        unknown,
      ];
      expect(decoded[0].self).toBe(decoded[0]);
      expect(decoded[1].get(1)).toBe(decoded[0]);
      expect(decoded[2]).toBe(decoded[0]);
      // An Error keeps its name and message.
      const error = await http(server, 'POST', '/processes', {
        body: { code: 'output(new TypeError("boom"))', block: true },
      });
      expect(decodeOutputValue(error.body.outputs[0])).toMatchObject({ name: 'TypeError', message: 'boom' });
    }
    // A new server on the same database reads every value from the store.
    await using again = await startServer({ ...SERVER, db });
    for (const { pid, value } of sent) {
      const output = await http(again, 'GET', `/processes/${pid}/output`);
      expect(decodeOutputValue(output.body.output)).toStrictEqual(value);
    }
  });
});
