import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseToolFile, parseToolsetFile, SchemaError, type ToolInput } from '../src/index.ts';

const parseError = (fn: () => unknown): SchemaError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof SchemaError) return error;
    throw error;
  }
  throw new Error('expected a SchemaError');
};

describe('parseToolFile', () => {
  it('parses a minimal file and applies the top-level defaults', () => {
    expect(parseToolFile('{"schemaVersion":"1.0","tools":[]}', 'inline.json')).toEqual({
      schemaVersion: '1.0',
      tools: [],
      libraryDir: './mci',
      enableAnyPaths: false,
      directoryAllowList: [],
    });
  });

  it('accepts a file holding only toolsets or only mcp_servers; toolset names may be bare strings', () => {
    expect(parseToolFile("schemaVersion: '1.0'\ntoolsets: [a, {name: b}]\n", 'x.yaml').toolsets).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);
    expect(
      parseToolFile('{"schemaVersion":"1.0","mcp_servers":{"s":{"command":"node"}}}', 'x.json').mcp_servers,
    ).toEqual({ s: { type: 'stdio', command: 'node' } });
  });

  it('ignores $schema and rejects other unknown top-level fields', () => {
    expect(
      parseToolFile('{"$schema":"./mci.schema.json","schemaVersion":"1.0","tools":[]}', 'x.json').tools,
    ).toEqual([]);
    const error = parseError(() => parseToolFile('{"schemaVersion":"1.0","tools":[],"tool":[]}', 'x.json'));
    expect(error.issues).toMatchObject([{ path: 'tool', message: 'unknown field "tool"', line: 1 }]);
  });

  it('chooses the syntax by extension, else by content', () => {
    const json = '{"schemaVersion":"1.0","tools":[]}';
    expect(parseToolFile(json, 'no-extension').tools).toEqual([]);
    expect(parseToolFile("schemaVersion: '1.0'\ntools: []\n", 'no-extension').tools).toEqual([]);
    expect(parseError(() => parseToolFile("schemaVersion: '1.0'\ntools: []\n", 'x.json')).code).toBe(
      'PARSE_ERROR',
    );
  });

  it.each([
    ['{\n  "schemaVersion": "1.0",\n  "tools": [x]\n}', 3, 13, "Unexpected token 'x'"],
    ['{\n  "schemaVersion": "1.0",\n  "tools": [x, 1, 2, 3, 4, 5, 6, 7]\n}', 3, 13, "Unexpected token 'x'"],
    ['{"a": x, "schemaVersion": "1.0", "tools": []}', 1, 7, "Unexpected token 'x'"],
    ['{"a":x}', 1, 6, "Unexpected token 'x'"],
    ['{\n  "schemaVersion": "1.0",\n  "tools": [],\n}', 4, 1, 'Expected double-quoted property name'],
    ['{\n  "schemaVersion": "1.0",\n  "tools": [\n', 4, 1, 'Unexpected end of JSON input'],
  ])('gives the line and column of JSON syntax errors (%j)', (text, line, column, message) => {
    expect(parseError(() => parseToolFile(text, 'x.json')).issues).toEqual([
      { file: 'x.json', path: '', message: `invalid JSON: ${message}`, line, column, code: 'PARSE_ERROR' },
    ]);
  });

  it('accepts a UTF-8 byte-order mark and rejects several YAML documents in one file', () => {
    expect(parseToolFile('\uFEFF{"schemaVersion":"1.0","tools":[]}', 'bom.json').tools).toEqual([]);
    const error = parseError(() => parseToolFile("schemaVersion: '1.0'\ntools: []\n---\nx: 1\n", 'two.yaml'));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.issues[0]).toMatchObject({ line: 3, message: expect.stringMatching(/multiple documents/) });
  });

  it('rejects MCP server names that could leave the cache directory', () => {
    const text = JSON.stringify({
      schemaVersion: '1.0',
      mcp_servers: { '../x': { command: 'a' }, '..': { command: 'a' }, 'ok.name-1': { command: 'a' } },
    });
    const error = parseError(() => parseToolFile(text, 'x.json'));
    expect(error.issues.map((issue) => issue.path)).toEqual(['mcp_servers["../x"]', 'mcp_servers[".."]']);
    expect(error.issues[0]?.message).toBe(
      'invalid key "../x": MCP server names may hold only letters, digits, "_", "-" and "."',
    );
  });

  it('reports YAML anchors expanding too far instead of hanging', () => {
    const bomb = [
      "schemaVersion: '1.0'",
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'tools: []',
    ].join('\n');
    const error = parseError(() => parseToolFile(bomb, 'bomb.yaml'));
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.issues[0]?.message).toMatch(/^cannot expand the YAML document: Excessive alias count/);
  });
});

describe('parseToolsetFile', () => {
  it('requires tools and keeps metadata', () => {
    expect(
      parseToolsetFile('{"schemaVersion":"1.0","metadata":{"name":"w"},"tools":[]}', 't.json'),
    ).toMatchObject({
      metadata: { name: 'w' },
      tools: [],
    });
    const error = parseError(() => parseToolsetFile("schemaVersion: '1.0'\n", 't.yaml'));
    expect(error.issues).toMatchObject([{ path: 'tools', message: 'required field "tools" is missing' }]);
  });
});

// Property: the same document written as JSON or as YAML parses to the same value.
const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/);
const text = fc.string({ maxLength: 20 });
const execution = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record(
    { type: fc.constant('file'), path: word, enableTemplating: fc.boolean() },
    { requiredKeys: ['type', 'path'] },
  ),
  fc.record(
    { type: fc.constant('cli'), command: word, args: fc.array(text, { maxLength: 3 }), timeout_ms: fc.nat() },
    { requiredKeys: ['type', 'command'] },
  ),
  fc.record(
    {
      type: fc.constant('http'),
      url: word,
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
      headers: fc.dictionary(word, text, { maxKeys: 3 }),
      body: fc.oneof(
        fc.record({ type: fc.constant('json'), content: fc.jsonValue({ maxDepth: 2 }) }),
        fc.record({ type: fc.constant('raw'), content: text }),
      ),
      retries: fc.record(
        { attempts: fc.integer({ min: 1, max: 5 }), backoff_ms: fc.nat() },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['type', 'url'] },
  ),
);
const tool = fc.record(
  {
    name: word,
    description: text,
    disabled: fc.boolean(),
    tags: fc.array(word, { maxLength: 3 }),
    execution,
  },
  { requiredKeys: ['name', 'execution'] },
);

describe('JSON and YAML give identical results', () => {
  it('for any valid tool list', () => {
    fc.assert(
      fc.property(fc.array(tool, { maxLength: 4 }), (tools) => {
        const doc = { schemaVersion: '1.0', tools: tools as ToolInput[] };
        // Round-trip through JSON first: fast-check JSON values may hold -0, which JSON spells 0.
        const json = JSON.stringify(doc);
        const fromJson = parseToolFile(json, 'p.json');
        const fromYaml = parseToolFile(stringify(JSON.parse(json)), 'p.yaml');
        expect(fromYaml).toEqual(fromJson);
      }),
      { numRuns: 200 },
    );
  });
});
