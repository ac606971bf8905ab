import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadToolFile, type McpToolsetResolver, SchemaError, type Tool } from '../src/index.ts';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const fixture = (name: string) => join(fixtures, name);
const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name);

describe('loadToolFile: toolset resolution', () => {
  it('finds toolsets as a directory, a bare file, and .mci.json/.mci.yaml/.mci.yml files, in listed order', async () => {
    const collection = await loadToolFile(fixture('resolution/main.yaml'));
    expect(collection.tools.map((tool) => [tool.name, tool.toolset])).toEqual([
      ['main_tool', undefined],
      ['dir_a', 'dirset'],
      ['dir_b', 'dirset'],
      ['dir_c', 'dirset'],
      ['plain_tool', 'plain'],
      ['json_tool', 'jsonset'],
      ['yaml_tool', 'yamlset'],
      ['yml_tool', 'ymlset'],
      ['both_from_directory', 'both'],
    ]);
  });

  it('lists the referenced toolsets in order, even one whose tools are all filtered out', async () => {
    expect((await loadToolFile(fixture('resolution/main.yaml'))).toolsets).toEqual([
      'dirset',
      'plain',
      'jsonset',
      'yamlset',
      'ymlset',
      'both',
    ]);
    expect((await loadToolFile(fixture('filters/only.yaml'))).toolsets).toEqual(['weather']);
  });

  it('remembers the file each tool came from', async () => {
    const collection = await loadToolFile(fixture('resolution/main.yaml'));
    const source = (name: string) => collection.get(name)?.source;
    expect(source('main_tool')).toBe(fixture('resolution/main.yaml'));
    expect(source('dir_a')).toBe(fixture('resolution/mci/dirset/a.mci.json'));
    expect(source('dir_b')).toBe(fixture('resolution/mci/dirset/b.mci.yaml'));
    expect(source('plain_tool')).toBe(fixture('resolution/mci/plain'));
    expect(source('yml_tool')).toBe(fixture('resolution/mci/ymlset.mci.yml'));
  });

  it('never merges toolset metadata into the main file', async () => {
    const collection = await loadToolFile(fixture('resolution/main.yaml'));
    expect(collection.metadata).toEqual({ name: 'Resolution fixture' });
  });

  it('resolves a custom libraryDir relative to the main file and keeps path settings as written', async () => {
    const collection = await loadToolFile(fixture('custom-lib/mci.json'));
    expect(collection.file).toBe(fixture('custom-lib/mci.json'));
    expect(collection.dir).toBe(dirname(fixture('custom-lib/mci.json')));
    expect(collection.libraryDir).toBe(fixture('custom-lib/tools-lib'));
    expect(collection.enableAnyPaths).toBe(true);
    expect(collection.directoryAllowList).toEqual(['./data', '/srv/shared']);
    expect(collection.get('extra_tool')?.execution).toEqual({
      type: 'cli',
      command: 'echo',
      args: ['extra'],
      timeout_ms: 30000,
    });
  });

  it('defaults libraryDir to ./mci, enableAnyPaths to false, directoryAllowList to []', async () => {
    const collection = await loadToolFile(fixture('filters/unfiltered.yaml'));
    expect(collection.libraryDir).toBe(fixture('filters/mci'));
    expect(collection.enableAnyPaths).toBe(false);
    expect(collection.directoryAllowList).toEqual([]);
    expect(collection.mcpServers).toEqual({});
  });

  it('resolves relative paths against the working directory', async () => {
    const relativePath = join('test', 'fixtures', 'resolution', 'main.yaml');
    const cwd = process.cwd();
    process.chdir(fileURLToPath(new URL('..', import.meta.url)));
    try {
      expect((await loadToolFile(relativePath)).file).toBe(fixture('resolution/main.yaml'));
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('loadToolFile: JSON and YAML', () => {
  it('gives identical collections for the same content in JSON and YAML', async () => {
    const fromYaml = await loadToolFile(fixture('equivalent/full.yaml'));
    const fromJson = await loadToolFile(fixture('equivalent/full.json'));
    const strip = (tools: typeof fromYaml.tools) => tools.map(({ source: _source, ...tool }) => tool);
    expect(strip(fromJson.tools)).toEqual(strip(fromYaml.tools));
    expect(fromJson.metadata).toEqual(fromYaml.metadata);
    expect(fromJson.mcpServers).toEqual(fromYaml.mcpServers);
    expect(fromJson.directoryAllowList).toEqual(fromYaml.directoryAllowList);
    expect(fromJson.libraryDir).toBe(fromYaml.libraryDir);
  });

  it('keeps every field and applies defaults', async () => {
    const collection = await loadToolFile(fixture('equivalent/full.yaml'));
    expect(collection.metadata).toEqual({
      name: 'Everything',
      description: 'One of each field',
      version: '1.2.0',
      license: 'MIT',
      authors: ['Ada', 'Grace'],
    });
    expect(collection.get('http_all')).toMatchObject({
      title: 'HTTP with every option',
      description: 'POST with auth, params, body and retries',
      disabled: false,
      tags: ['api', 'Write'],
      annotations: { title: 'Post it', idempotentHint: true, openWorldHint: true, readOnlyHint: false },
      inputSchema: { required: ['id'] },
      execution: {
        method: 'POST',
        headers: { Accept: 'application/json', 'X-Count': '{!!props.id!!}' },
        params: { verbose: 'true' },
        auth: { type: 'apiKey', in: 'header', name: 'X-API-Key', value: '{{env.API_KEY}}' },
        body: { type: 'json', content: { id: '{!!props.id!!}', note: '{{props.note}}', list: [1, 2, null] } },
        timeout_ms: 5000,
        retries: { attempts: 3, backoff_ms: 100 },
      },
    });
    expect(collection.get('http_defaults')).toMatchObject({
      tags: [],
      disabled: false,
      execution: { method: 'GET', timeout_ms: 30000, retries: { attempts: 1, backoff_ms: 500 } },
    });
    expect(collection.get('http_raw')?.execution).toMatchObject({
      auth: { type: 'oauth2', flow: 'clientCredentials', scopes: ['read', 'write'] },
      body: { type: 'raw', content: 'plain text' },
    });
    expect(collection.get('cli_all')).toMatchObject({
      enableAnyPaths: true,
      directoryAllowList: ['/var/tmp'],
      execution: { flags: { '-i': { type: 'boolean' }, '--max-count': { type: 'value' } }, timeout_ms: 0 },
    });
    expect(collection.get('file_default')?.execution).toEqual({
      type: 'file',
      path: './README.md',
      enableTemplating: true,
    });
    expect(collection.get('file_read')?.execution).toMatchObject({ enableTemplating: false });
    expect(collection.mcpServers.everything).toEqual({
      type: 'stdio',
      command: 'node',
      args: ['server.js'],
      env: { DEBUG: '1' },
      config: { expDays: 7, filter: 'except', filterValue: 'printEnv, longRunningOperation' },
    });
    expect(collection.mcpServers.remote).toMatchObject({ type: 'http', url: '{{env.MCP_URL}}' });
  });

  it('leaves disabled tools out of tools, list and get', async () => {
    const collection = await loadToolFile(fixture('equivalent/full.yaml'));
    expect(names(collection.tools)).not.toContain('hidden');
    expect(names(collection.list())).not.toContain('hidden');
    expect(collection.get('hidden')).toBeUndefined();
    expect(collection.get('no_such_tool')).toBeUndefined();
  });
});

describe('loadToolFile: MCP servers', () => {
  const echoTool = (name: string, tags: string[] = []): Tool => ({
    name,
    disabled: false,
    tags,
    inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
    execution: { type: 'mcp', serverName: 'everything', toolName: name },
  });

  it('contributes no tools without a resolver', async () => {
    const collection = await loadToolFile(fixture('equivalent/full.yaml'));
    expect(collection.tools.every((tool) => tool.toolset === undefined)).toBe(true);
  });

  it('asks the resolver per server and applies the server filter', async () => {
    const calls: string[] = [];
    const resolver: McpToolsetResolver = async (name, config, ctx) => {
      calls.push(`${name}:${config.type}:${ctx.libraryDir}:${ctx.env.MCP_URL}`);
      if (name === 'remote') return [];
      return [echoTool('echo'), echoTool('printEnv'), echoTool('add', ['math'])];
    };
    const collection = await loadToolFile(fixture('equivalent/full.yaml'), {
      mcpResolver: resolver,
      env: { MCP_URL: 'http://127.0.0.1:1' },
    });
    expect(calls.sort()).toEqual([
      `everything:stdio:${fixture('equivalent/lib')}:http://127.0.0.1:1`,
      `remote:http:${fixture('equivalent/lib')}:http://127.0.0.1:1`,
    ]);
    const mcp = collection.list({ toolsets: ['everything'] });
    expect(names(mcp)).toEqual(['echo', 'add']);
    expect(mcp[0]).toMatchObject({
      toolset: 'everything',
      source: fixture('equivalent/full.yaml'),
      tags: [],
    });
  });

  it('reports a failing server and invalid tools from a server', async () => {
    const error = await loadToolFile(fixture('equivalent/full.yaml'), {
      mcpResolver: async (name) => {
        if (name === 'remote') throw new Error('connection refused');
        return [{ name: '', execution: { type: 'mcp', serverName: 'everything', toolName: 'x' } } as Tool];
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    const { code, issues } = error as SchemaError;
    expect(code).toBe('MCP_SERVER_FAILED');
    expect(issues.map((issue) => [issue.path, issue.message])).toEqual(
      expect.arrayContaining([
        ['mcp_servers.remote', 'MCP server "remote" failed: connection refused'],
        [
          'mcp_servers.everything',
          'MCP server "everything" returned an invalid tool at tools[0].name: must not be empty',
        ],
      ]),
    );
  });

  it('reports an MCP tool whose name clashes with a file tool', async () => {
    const error = await loadToolFile(fixture('equivalent/full.yaml'), {
      mcpResolver: async (name) => (name === 'everything' ? [{ ...echoTool('text_tool') }] : []),
    }).catch((e: unknown) => e);
    expect((error as SchemaError).code).toBe('DUPLICATE_TOOL');
    expect((error as SchemaError).issues[0]?.message).toMatch(
      /duplicate tool name "text_tool": defined in .*full\.yaml:\d+ \(tools\[8\]\) and in .*full\.yaml:\d+ \(mcp_servers\.everything\)/,
    );
  });
});

describe('loadToolFile: files on disk', () => {
  it('rereads a changed toolset on the next load (no stale cache)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mci-schema-'));
    try {
      await cp(fixture('filters'), dir, { recursive: true });
      const main = join(dir, 'unfiltered.yaml');
      expect(names(await loadToolFile(main).then((c) => c.tools))).toContain('get_weather');
      await writeFile(
        join(dir, 'mci', 'weather.mci.json'),
        JSON.stringify({
          schemaVersion: '1.0',
          tools: [{ name: 'renamed', execution: { type: 'text', text: 'x' } }],
        }),
      );
      expect(names((await loadToolFile(main)).tools)).toEqual(['local_echo', 'renamed']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
