import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createServer } from '../src/server.ts';

// A run that asks for an approval is resumed by replaying its program: the files it made before it
// asked are made again by the replay, and must be stored and announced once, like its outputs.

const dir = mkdtempSync(join(tmpdir(), 'mci-resumed-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'tools.yaml'),
  `schemaVersion: '1.0'
tools:
  - name: charge
    annotations: { destructiveHint: true }
    execution: { type: text, text: 'charged' }
`,
);

const PROGRAM = `
await output.file('before.txt', 'made before the approval');
output('one');
const charged = await tools.charge({});
await output.file('after.txt', 'made after it');
output(charged.content[0].text);
`;

describe('a resumed run', () => {
  it('makes each file once: the replay skips those made before the approval', async () => {
    await using server = await createServer({
      file: join(dir, 'tools.yaml'),
      host: '127.0.0.1',
      port: 0,
      logLevel: 'silent',
      db: join(dir, 'mci.db'),
    });
    const call = async (method: string, path: string) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        ...(method === 'POST' && { body: '{}' }),
      });
      return response.json() as Promise<Record<string, any>>;
    };
    const created = await fetch(`${server.url}/processes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: PROGRAM }),
    });
    const { pid } = (await created.json()) as { pid: number };
    const waiting = await vi.waitFor(
      async () => {
        const process = await call('GET', `/processes/${pid}`);
        expect(process.state).toBe('suspended');
        return process;
      },
      { timeout: 20_000 },
    );
    await call('POST', `/approvals/${waiting.pendingApprovals[0]}/approve`);
    await vi.waitFor(async () => expect((await call('GET', `/processes/${pid}`)).status).toBe('success'), {
      timeout: 20_000,
    });
    const run = await call('GET', `/processes/${pid}/runs/1`);
    expect(run.outputs).toEqual([
      expect.objectContaining({ type: 'file', name: 'before.txt' }),
      'one',
      expect.objectContaining({ type: 'file', name: 'after.txt' }),
      'charged',
    ]);
    for (const [name, text] of [
      ['before.txt', 'made before the approval'],
      ['after.txt', 'made after it'],
    ]) {
      const file = await fetch(`${server.url}/processes/${pid}/runs/1/files/${name}`);
      expect(await file.text()).toBe(text);
    }
  });
});
