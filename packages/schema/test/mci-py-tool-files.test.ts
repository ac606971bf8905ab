import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadToolFile, parseToolsetFile, SchemaError } from '../src/index.ts';

// Tool files as mci-py writes them: a cached MCP toolset (`expiresAt` as a date) and a main file using it.
const dir = fileURLToPath(new URL('./fixtures/mci-py/', import.meta.url));
const cacheFile = join(dir, 'mci/mcp/filesystem.mci.json');

/** Writes `text` to a fresh temporary file and runs `use` on its path. */
async function withFile<T>(name: string, text: string, use: (file: string) => Promise<T>): Promise<T> {
  const tmp = await mkdtemp(join(tmpdir(), 'mci-py-'));
  try {
    const file = join(tmp, name);
    await writeFile(file, text);
    return await use(file);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

describe('mci-py tool files', () => {
  it('accepts expiresAt in a toolset file used by a main file', async () => {
    const collection = await loadToolFile(join(dir, 'main.mci.json'));
    expect(collection.kind).toBe('main');
    expect(collection.tools.map((tool) => [tool.name, tool.toolset])).toEqual([
      ['read_text_file', 'mcp/filesystem'],
      ['list_allowed_directories', 'mcp/filesystem'],
    ]);
  });

  it('loads a cached MCP toolset file on its own as a toolset, saying which servers it needs', async () => {
    const collection = await loadToolFile(cacheFile);
    expect(collection).toMatchObject({
      kind: 'toolset',
      mcpServerNames: ['filesystem'],
      expiresAt: '2025-11-04',
      metadata: { name: 'filesystem' },
    });
    expect(collection.tools).toHaveLength(2);
    expect(collection.file).toBe(cacheFile);
    expect(dirname(collection.file)).toBe(join(dir, 'mci/mcp'));
  });

  it('still checks what a toolset on its own can be checked for', async () => {
    const text = JSON.stringify({
      schemaVersion: '1.0',
      tools: [
        {
          name: 'a',
          inputSchema: { type: 'object', properties: { x: { type: 'nope' } } },
          execution: { type: 'mcp', serverName: 's', toolName: 'a' },
        },
        { name: 'a', execution: { type: 'mcp', serverName: 's', toolName: 'b' } },
      ],
      expiresAt: 'soon',
    });
    expect(() => parseToolsetFile(text, 'cache.mci.json')).toThrow(/expiresAt: expected an ISO 8601 date/);
    const error = await withFile('cache.mci.json', text.replace('"soon"', '"2030-01-01T00:00:00Z"'), (file) =>
      loadToolFile(file).catch((caught: unknown) => caught),
    );
    expect(error).toBeInstanceOf(SchemaError);
    const messages = (error as SchemaError).issues.map((issue) => `${issue.path}: ${issue.message}`);
    expect(messages).toEqual([
      expect.stringMatching(/^tools\[0\]\.inputSchema\.properties\.x\.type: not a valid JSON Schema/),
      expect.stringMatching(/^tools\[1\]\.name: duplicate tool name "a"/),
    ]);
  });

  it('still reports an undeclared server in a main file', async () => {
    const text = JSON.stringify({
      schemaVersion: '1.0',
      mcp_servers: { other: { command: 'x' } },
      tools: [{ name: 'a', execution: { type: 'mcp', serverName: 's', toolName: 'a' } }],
    });
    await withFile('mci.json', text, (file) =>
      expect(loadToolFile(file)).rejects.toThrow(/MCP server "s" is not declared/),
    );
  });
});
