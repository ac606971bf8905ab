import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRunner, loadTools } from '../src/index.ts';
import { runnerFor, runnerForTool, toolDir } from './helpers/tool-dir.ts';

const readTool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  execution: { type: 'file', path: '{{props.path}}' },
  ...extra,
});

describe('file tools', () => {
  // A directory outside every tool dir, and a sibling whose name starts like it (`-evil`).
  let outside: string;
  beforeAll(async () => {
    outside = await realpath(await mkdtemp(join(tmpdir(), 'mci-outside-')));
    await writeFile(join(outside, 'secret.txt'), 'outside secret');
    await mkdir(`${outside}-evil`, { recursive: true });
    await writeFile(join(`${outside}-evil`, 'evil.txt'), 'evil');
  });
  afterAll(async () => {
    await rm(outside, { recursive: true, force: true });
    await rm(`${outside}-evil`, { recursive: true, force: true });
  });

  it('reads a file relative to the tool file and renders it unless templating is off', async () => {
    await using t = await runnerFor({
      tools: [
        readTool('read'),
        {
          name: 'raw',
          execution: { type: 'file', path: 'templates/{{props.name}}.md', enableTemplating: false },
        },
      ],
    });
    await writeFile(join(t.dir, 'note.txt'), 'Hello {{props.who}}!\n@if(props.loud)LOUD@endif');
    await mkdir(join(t.dir, 'templates'));
    await writeFile(join(t.dir, 'templates', 'doc.md'), 'Keep {{props.who}} as is');

    const read = await t.runner.execute('read', { path: 'note.txt', who: 'Ann', loud: true });
    expect(read).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'Hello Ann!\nLOUD' }],
      metadata: {
        path: join(t.dir, 'note.txt'),
        size_bytes: Buffer.byteLength('Hello {{props.who}}!\n@if(props.loud)LOUD@endif'),
      },
    });
    const raw = await t.runner.execute('raw', { name: 'doc' });
    expect(raw.content).toEqual([{ type: 'text', text: 'Keep {{props.who}} as is' }]);
  });

  it('reports missing files, directories and bad templates in the file', async () => {
    await using t = await runnerForTool(readTool('read'));
    await mkdir(join(t.dir, 'folder'));
    await writeFile(join(t.dir, 'broken.txt'), 'Hi {{props.missing}}');
    expect((await t.runner.execute('read', { path: 'nope.txt' })).error).toBe('File not found: nope.txt');
    expect((await t.runner.execute('read', { path: 'folder' })).error).toBe('Not a file: folder');
    const broken = await t.runner.execute('read', { path: 'broken.txt' });
    expect(broken.isError).toBe(true);
    expect(broken.error).toMatch(/^file broken\.txt: .*props\.missing/);
  });

  it('refuses files larger than maxOutputBytes', async () => {
    await using t = await runnerForTool(readTool('read'), { maxOutputBytes: 100 });
    await writeFile(join(t.dir, 'big.txt'), 'b'.repeat(101));
    await writeFile(join(t.dir, 'fits.txt'), 'f'.repeat(100));
    expect((await t.runner.execute('read', { path: 'big.txt' })).error).toBe(
      'File big.txt is larger than the 100-byte limit (101 bytes)',
    );
    expect((await t.runner.execute('read', { path: 'fits.txt' })).content).toEqual([
      { type: 'text', text: 'f'.repeat(100) },
    ]);
  });

  it('refuses paths outside the allowed roots: absolute, `..`, symlinks and name prefixes', async () => {
    await using t = await runnerForTool(readTool('read'));
    await symlink(join(outside, 'secret.txt'), join(t.dir, 'link.txt'));
    await symlink(outside, join(t.dir, 'linkdir'));
    await writeFile(join(t.dir, 'inside.txt'), 'inside');
    for (const path of [
      join(outside, 'secret.txt'),
      '../' + outside.split('/').pop() + '/secret.txt',
      'link.txt',
      'linkdir/secret.txt',
      'linkdir/nope.txt',
    ]) {
      const result = await t.runner.execute('read', { path });
      expect(result.isError, path).toBe(true);
      expect(result.error).toContain(`Path "${path}"`);
      expect(result.error).toContain('is outside the allowed directories');
      expect(result.error).not.toContain(t.dir);
    }
    // `..` collapses before symlinks are followed, so these stay inside and read the checked file.
    for (const path of ['sub/../inside.txt', 'linkdir/../inside.txt']) {
      expect((await t.runner.execute('read', { path })).content).toEqual([{ type: 'text', text: 'inside' }]);
    }
  });

  it('never discloses server paths or the server pid in path errors (/proc/self resolves to the pid)', async () => {
    await using t = await runnerForTool(readTool('read'));
    const paths = [
      '/proc/self/status',
      '/proc/self/cwd/x',
      'nope/missing.txt',
      '/etc/passwd',
      'note\0.txt',
      `${'a'.repeat(300)}.txt`,
      `${'d/'.repeat(3000)}x.txt`,
    ];
    for (const path of paths) {
      const { error } = await t.runner.execute('read', { path });
      expect(error, path).toBeDefined();
      expect(error, path).not.toContain(t.dir);
      expect(error, path).not.toMatch(new RegExp(`\\b${process.pid}\\b`));
    }
  });

  it('allows directoryAllowList roots by whole path components', async () => {
    await using t = await runnerFor({ directoryAllowList: [outside], tools: [readTool('read')] });
    expect((await t.runner.execute('read', { path: join(outside, 'secret.txt') })).content).toEqual([
      { type: 'text', text: 'outside secret' },
    ]);
    const evil = await t.runner.execute('read', { path: join(`${outside}-evil`, 'evil.txt') });
    expect(evil.isError).toBe(true);
    expect(evil.error).toContain('is outside the allowed directories');
    expect(evil.error).not.toContain(t.dir);
  });

  it('resolves relative allow-list entries against the tool file directory', async () => {
    await using dir = await toolDir({ directoryAllowList: ['../shared'], tools: [readTool('read')] });
    const shared = join(dir.dir, '..', 'shared');
    // The tool dir is a temp dir, so its sibling `shared` is made by hand and removed afterwards.
    await using _t = await nested(shared);
    await writeFile(join(shared, 'a.txt'), 'shared a');
    await using runner = createToolRunner(await loadTools(dir.file));
    expect((await runner.execute('read', { path: '../shared/a.txt' })).content).toEqual([
      { type: 'text', text: 'shared a' },
    ]);
  });

  it('lets a tool override the allow-list and enableAnyPaths in both directions', async () => {
    await using other = await nested(await realpath(await mkdtemp(join(tmpdir(), 'mci-other-'))));
    await writeFile(join(other.path, 'b.txt'), 'other b');
    await using t = await runnerFor({
      directoryAllowList: [outside],
      tools: [
        readTool('schema-level'),
        readTool('own-list', { directoryAllowList: [other.path] }),
        readTool('empty-list', { directoryAllowList: [] }),
        readTool('any', { enableAnyPaths: true }),
      ],
    });
    const secret = join(outside, 'secret.txt');
    const b = join(other.path, 'b.txt');
    expect((await t.runner.execute('schema-level', { path: secret })).isError).toBe(false);
    expect((await t.runner.execute('schema-level', { path: b })).isError).toBe(true);
    // A non-empty tool list replaces the schema's.
    expect((await t.runner.execute('own-list', { path: b })).isError).toBe(false);
    expect((await t.runner.execute('own-list', { path: secret })).isError).toBe(true);
    // An empty tool list keeps the schema's.
    expect((await t.runner.execute('empty-list', { path: secret })).isError).toBe(false);
    expect((await t.runner.execute('any', { path: b })).content).toEqual([{ type: 'text', text: 'other b' }]);

    await using open = await runnerFor({
      enableAnyPaths: true,
      tools: [readTool('open'), readTool('closed', { enableAnyPaths: false })],
    });
    expect((await open.runner.execute('open', { path: secret })).isError).toBe(false);
    const closed = await open.runner.execute('closed', { path: secret });
    expect(closed.isError).toBe(true);
    expect(closed.error).toContain('outside the allowed directories');
  });
});

/** Creates a directory (with parents) and removes it on dispose. */
async function nested(path: string): Promise<{ path: string } & AsyncDisposable> {
  await mkdir(path, { recursive: true });
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}
