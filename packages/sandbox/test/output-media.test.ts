import { describe, expect, it } from 'vitest';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1, limits: { timeoutMs: 10_000 } });

describe('output.image', () => {
  it('outputs bytes as an image value with base64 data', async () => {
    const r = await run(pool, `output.image(new Uint8Array([1, 2, 3]), 'image/png'); output('after');`);
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([{ type: 'image', mimeType: 'image/png', data: 'AQID' }, 'after']);
  });

  it('takes an ArrayBuffer and base64 text', async () => {
    const r = await run(
      pool,
      `await output.image(new Uint8Array([9]).buffer, 'image/gif'); await output.image('AQID', 'image/jpeg');`,
    );
    expect(r.outputs).toEqual([
      { type: 'image', mimeType: 'image/gif', data: 'CQ==' },
      { type: 'image', mimeType: 'image/jpeg', data: 'AQID' },
    ]);
  });

  it('refuses a media type that is not an image, and text that is not base64', async () => {
    const r = await run(
      pool,
      `for (const args of [[new Uint8Array(1), 'text/html'], [new Uint8Array(1), 'image'], ['not base64!', 'image/png']]) {
        try { await output.image(...args); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`,
    );
    expect(r.outputs).toEqual([]);
    expect(r.stdout).toContain(
      'TypeError: output.image(): the mimeType must be an image media type such as "image/png", got "text/html"',
    );
    expect(r.stdout).toContain('got "image"');
    expect(r.stdout).toContain('TypeError: output.image(): the data must be');
  });

  it('fails the run with a clear error when an image is over the output limit', async () => {
    const r = await run(pool, `output.image(new Uint8Array(4000), 'image/png');`, {
      limits: { maxOutputBytes: 1000 },
    });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(
      /^output\.image\(\): \d+ bytes do not fit in this run's output limit \(1000 of 1000 bytes left, limits\.maxOutputBytes\)$/,
    );
    expect(r.outputs).toEqual([]);
  });
});

describe('output.file', () => {
  it('makes files from text and bytes, with default media types', async () => {
    const r = await run(
      pool,
      `output.file('a.csv', 'x,y\\n1,2\\n', 'text/csv'); output.file('notes.txt', 'héllo'); output.file('b.bin', new Uint8Array([0, 255]));`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([]);
    const files = (r.files ?? []).map((f) => ({ ...f, data: Buffer.from(f.data).toString('hex') }));
    expect(files).toEqual([
      { name: 'a.csv', mimeType: 'text/csv', data: Buffer.from('x,y\n1,2\n').toString('hex') },
      { name: 'notes.txt', mimeType: 'text/plain', data: Buffer.from('héllo').toString('hex') },
      { name: 'b.bin', mimeType: 'application/octet-stream', data: '00ff' },
    ]);
    expect(r.events.filter((e) => e.type === 'file').map((e) => e.type === 'file' && e.name)).toEqual([
      'a.csv',
      'notes.txt',
      'b.bin',
    ]);
  });

  it('refuses path traversal, separators, empty and long names, and bad media types', async () => {
    const r = await run(
      pool,
      `const tries = [['../etc/passwd', 'x'], ['a/b.txt', 'x'], ['a\\\\b', 'x'], ['', 'x'], ['x'.repeat(201), 'x'], ['ok.txt', 'x', 'text'], ['ok.txt', 'x', 'text/plain; x=<script>'], ['ok.txt', 42]];
      for (const args of tries) {
        try { await output.file(...args); console.log('made'); } catch (e) { console.log(e.name + ': ' + e.message); }
      }`,
    );
    expect(r.files).toBeUndefined();
    const lines = r.stdout.trim().split('\n');
    expect(lines).toEqual([
      'TypeError: output.file(): the name "../etc/passwd" contains ".."',
      'TypeError: output.file(): the name "a/b.txt" contains a path separator or a character not allowed in file names',
      'TypeError: output.file(): the name "a\\\\b" contains a path separator or a character not allowed in file names',
      'TypeError: output.file(): the name is empty',
      'TypeError: output.file(): the name is 201 characters long, over the limit of 200',
      'TypeError: output.file(): the mimeType must be a media type such as "text/csv", got "text"',
      'TypeError: output.file(): the mimeType must be a media type such as "text/csv", got "text/plain; x=<script>"',
      'TypeError: output.file(): the data must be a string, a Uint8Array or an ArrayBuffer',
    ]);
  });

  it('counts files against the output limit: a file past it rejects, the run goes on', async () => {
    const r = await run(
      pool,
      `await output.file('small.bin', new Uint8Array(600));
       try { await output.file('big.bin', new Uint8Array(600)); } catch (e) { output(e.message); }`,
      { limits: { maxOutputBytes: 1000 } },
    );
    expect(r.status).toBe('success');
    expect(r.files?.map((f) => f.name)).toEqual(['small.bin']);
    expect(r.outputs).toEqual([
      "output.file(): 600 bytes do not fit in this run's output limit (400 of 1000 bytes left, limits.maxOutputBytes)",
    ]);
  });

  it('refuses a second file of the same name in a run', async () => {
    const r = await run(pool, `await output.file('a.txt', '1'); await output.file('a.txt', '2');`);
    expect(r.status).toBe('failed');
    expect(r.error?.message).toBe('output.file(): this run already made a file named "a.txt"');
    expect(r.files?.map((f) => Buffer.from(f.data).toString())).toEqual(['1']);
  });

  it('waits for unawaited pictures and files before the run ends', async () => {
    const r = await run(pool, `output.file('late.txt', 'late'); output.image('AQID', 'image/png');`);
    expect(r.status).toBe('success');
    expect(r.files?.map((f) => f.name)).toEqual(['late.txt']);
    expect(r.outputs).toHaveLength(1);
  });
});
