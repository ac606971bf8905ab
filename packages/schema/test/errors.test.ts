import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadToolFile, SchemaError, type SchemaErrorCode } from '../src/index.ts';

const dir = fileURLToPath(new URL('./fixtures/errors/', import.meta.url));

/** Loads a fixture that must fail and returns its error. */
async function failure(name: string): Promise<SchemaError> {
  const error = await loadToolFile(join(dir, name)).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof SchemaError))
    throw new Error(`${name}: expected a SchemaError, got ${String(error)}`);
  return error;
}

type Expected = [path: string, message: string | RegExp, line?: number, file?: string];

const cases: [fixture: string, code: SchemaErrorCode, issues: Expected[]][] = [
  [
    'version-number.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'schemaVersion',
        `schemaVersion must be the string "1.0", not the number 1 (in YAML an unquoted 1.0 is a number: write schemaVersion: '1.0')`,
        1,
      ],
    ],
  ],
  [
    'version-unsupported.json',
    'INVALID_TOOL_FILE',
    [['schemaVersion', 'schemaVersion "2.0" is not supported: only "1.0" is', 2]],
  ],
  [
    'version-missing.yaml',
    'INVALID_TOOL_FILE',
    [['schemaVersion', 'schemaVersion is required: add schemaVersion: "1.0"', 1]],
  ],
  ['empty.yaml', 'PARSE_ERROR', [['', 'the file is empty']]],
  ['yaml-syntax.yaml', 'PARSE_ERROR', [['', /Flow map .* must .* end with a \}/, 5]]],
  ['json-syntax.json', 'PARSE_ERROR', [['', "invalid JSON: Expected ',' or '}' after property value", 4]]],
  ['json-duplicate-key.json', 'PARSE_ERROR', [['', 'duplicate key in object', 4]]],
  [
    'nothing.yaml',
    'INVALID_TOOL_FILE',
    [['', 'a tool file needs at least one of tools, toolsets or mcp_servers', 1]],
  ],
  ['tools-not-array.json', 'INVALID_TOOL_FILE', [['tools', 'expected an array, got an object', 3]]],
  [
    'many-issues.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'tools[0].execution.type',
        'unknown execution type "ftp": expected one of http, cli, file, text, mcp',
        4,
      ],
      ['tools[1].execution.body.type', 'unknown body type "xml": expected one of json, form, raw', 9],
      [
        'tools[2].execution.flags["-l"].type',
        'invalid type "toggle": expected one of "boolean", "value"',
        15,
      ],
      ['tools[3].execution.retries.attempts', 'must be >= 1, got 0', 17],
      ['tools[3].execution.timeout_ms', 'must be >= 0, got -1', 17],
      [
        'tools[4].execution.auth.type',
        'unknown auth type "digest": expected one of apiKey, bearer, basic, oauth2',
        19,
      ],
      ['tools[5].execution.auth.flow', 'invalid flow "password": expected "clientCredentials"', 24],
      [
        'tools[6].execution.method',
        /invalid method "FETCH": expected one of "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"/,
        26,
      ],
      ['tools[7].execution.url', 'required field "url" is missing', 28],
      ['tools[8].name', 'required field "name" is missing', 29],
      ['tools[9].execution.timeout', 'unknown field "timeout"', 31],
      ['tools[10].tags', 'expected an array, got the string "read"', 33],
    ],
  ],
  [
    'mcp-servers.yaml',
    'INVALID_TOOL_FILE',
    [
      ['mcp_servers.no_command.command', 'required field "command" is missing', 3],
      ['mcp_servers.no_url.url', 'required field "url" is missing', 4],
      ['mcp_servers.odd.type', 'unknown MCP server type "websocket": expected one of stdio, http', 5],
      [
        'mcp_servers.filter_no_value.config.filterValue',
        'filter "tags" needs a filterValue: a comma-separated list of tags',
        6,
      ],
    ],
  ],
  [
    'mcp-undeclared.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'tools[0].execution.serverName',
        `MCP server "unknown" is not declared in the main file's mcp_servers (declared: known)`,
        6,
      ],
    ],
  ],
  [
    'invalid-input-schema.yaml',
    'INVALID_TOOL_FILE',
    [
      ['tools[0].inputSchema.required', 'not a valid JSON Schema: must be array', 8],
      [
        'tools[0].inputSchema.properties.count.type',
        /not a valid JSON Schema: must be equal to one of the allowed values/,
        7,
      ],
      ['tools[1].inputSchema.type', `a tool's inputSchema must describe an object, not "array"`, 11],
    ],
  ],
  [
    'filter-values.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'toolsets[0].filterValue',
        'filter "only" needs a filterValue: a comma-separated list of tool names',
        5,
      ],
      [
        'toolsets[1].filter',
        'filterValue is set but filter is missing: add filter (only, except, tags or withoutTags)',
        6,
      ],
      [
        'toolsets[2].filter',
        'invalid filter "byName": expected one of "only", "except", "tags", "withoutTags"',
        9,
      ],
    ],
  ],
  [
    'filter-unknown-name.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'toolsets[0].filterValue',
        'only names "gret", not defined in toolset "shared" (it defines greet, retired)',
        5,
      ],
    ],
  ],
  [
    'toolset-not-found.yaml',
    'TOOLSET_NOT_FOUND',
    [
      [
        'toolsets[0].name',
        `toolset "nowhere" not found; tried ${['/ (directory)', '', '.mci.json', '.mci.yaml', '.mci.yml'].map((ext) => `${dir}mci/nowhere${ext}`).join(', ')}`,
        3,
      ],
    ],
  ],
  [
    'toolset-empty-dir.yaml',
    'TOOLSET_NOT_FOUND',
    [
      [
        'toolsets[0].name',
        `directory ${dir}mci/emptydir holds no *.mci.json, *.mci.yaml, *.mci.yml files`,
        3,
      ],
    ],
  ],
  [
    'toolset-escape.yaml',
    'INVALID_TOOL_FILE',
    [['toolsets[0].name', /toolset name "\.\.\/outside" must name a file or directory inside libraryDir/, 3]],
  ],
  [
    'toolset-forbidden.yaml',
    'INVALID_TOOL_FILE',
    [
      [
        'libraryDir',
        'toolset files may not set libraryDir: only the main tool file can',
        2,
        'mci/forbidden.mci.yaml',
      ],
      [
        'enableAnyPaths',
        'toolset files may not set enableAnyPaths: only the main tool file can',
        3,
        'mci/forbidden.mci.yaml',
      ],
      [
        'directoryAllowList',
        'toolset files may not set directoryAllowList: only the main tool file can',
        4,
        'mci/forbidden.mci.yaml',
      ],
      [
        'toolsets',
        'toolset files may not set toolsets: only the main tool file can',
        5,
        'mci/forbidden.mci.yaml',
      ],
    ],
  ],
  [
    'toolset-version.yaml',
    'INVALID_TOOL_FILE',
    [['schemaVersion', 'schemaVersion "2.0" is not supported: only "1.0" is', 1, 'mci/v2.mci.json']],
  ],
  [
    'toolset-broken-tool.yaml',
    'INVALID_TOOL_FILE',
    [
      ['tools[1].execution.path', 'required field "path" is missing', 6, 'mci/broken-tool.mci.yaml'],
      ['toolsets[1].name', /^toolset "nowhere" not found; tried /, 4],
    ],
  ],
  [
    'duplicate-tool.yaml',
    'DUPLICATE_TOOL',
    [
      [
        'tools[0].name',
        `duplicate tool name "greet": defined in ${dir}duplicate-tool.yaml:3 (tools[0]) and in ${dir}mci/shared.mci.yaml:3 (tools[0])`,
        3,
        'mci/shared.mci.yaml',
      ],
    ],
  ],
  ['missing.yaml', 'FILE_NOT_FOUND', [['', 'file not found']]],
  ['mci', 'FILE_NOT_FOUND', [['', 'is a directory, not a tool file']]],
];

describe('tool-file errors name the file, the JSON path, the line, and collect every issue', () => {
  it.each(cases)('%s', async (fixture, code, expected) => {
    const error = await failure(fixture);
    expect(error.code).toBe(code);
    expect(error.issues).toHaveLength(expected.length);
    expected.forEach(([path, message, line, file], index) => {
      const issue = error.issues[index];
      expect(issue?.path).toBe(path);
      expect(issue?.file).toBe(join(dir, file ?? fixture));
      if (typeof message === 'string') expect(issue?.message).toBe(message);
      else expect(issue?.message).toMatch(message);
      if (line !== undefined) {
        expect(issue?.line).toBe(line);
        expect(issue?.column).toBeGreaterThanOrEqual(1);
      }
      // The error's message lists every issue as file:line:column path: message.
      expect(error.message).toContain(issue?.message);
    });
  });

  it('formats each issue on its own line of the message', async () => {
    const error = await failure('many-issues.yaml');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('12 problems in tool files:');
    expect(lines[1]).toBe(
      `${dir}many-issues.yaml:4:18 tools[0].execution.type: unknown execution type "ftp": expected one of http, cli, file, text, mcp`,
    );
  });

  it('gives the column of a JSON syntax error', async () => {
    const error = await failure('json-syntax.json');
    expect(error.issues[0]).toMatchObject({ line: 4, column: 19 });
  });
});
