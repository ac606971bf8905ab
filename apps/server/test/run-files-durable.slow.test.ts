import { join } from 'node:path';
import { DRAW_PNG_PROGRAM, PNG_SIGNATURE } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { serveProcesses } from './support/serve-process.ts';

// A run's files through real `mci serve` processes: a picture a program drew is still served, byte
// for byte, after a kill -9 and a restart on the same SQLite file.

const { dir, file: tools } = greetToolDir('mci-files-durable-', 'Hello!');
const { serve, http } = serveProcesses(dir);

describe('run files after kill -9 and a restart', () => {
  it('serves the files of runs stored before', { timeout: 60_000 }, async () => {
    const db = join(dir, 'files.db');
    const first = serve(['--db', db, '--file', tools]);
    const url = await first.url;
    const created = await http(url, 'POST', '/processes', { code: DRAW_PNG_PROGRAM, block: true });
    expect(created.status).toBe(201);
    const { pid } = created.body;
    first.child.kill('SIGKILL');
    await first.exited;

    const second = serve(['--db', db, '--file', tools]);
    const again = await second.url;
    const response = await fetch(`${again}/processes/${pid}/runs/1/files/square.png`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(Uint8Array.from(bytes.subarray(0, 8))).toEqual(PNG_SIGNATURE);
    expect(bytes.toString('base64')).toBe(created.body.outputs[0].data);
    second.child.kill('SIGKILL');
  });
});
