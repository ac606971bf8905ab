import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { examplePath } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { mci } from '../../../test/support/mci.ts';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/tool-files/', import.meta.url));

let empty: string;
beforeAll(async () => {
  empty = await mkdtemp(join(tmpdir(), 'mci-cli-'));
});
afterAll(async () => {
  await rm(empty, { recursive: true, force: true });
});

describe('mci validate', () => {
  it('falls back to the example tool file and prints a one-line summary', async () => {
    const run = await mci(['validate'], { cwd: empty });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`${examplePath('mci.yaml')} is valid: 9 tools from 2 toolsets`);
    // Its http tools' variables have defaults in their templates: nothing needs setting.
    expect(run.stdout).not.toContain('env not set:');
    expect(run.stdout).toContain(
      "env not set, the templates' defaults are used: DEMO_API_TOKEN, DEMO_API_URL",
    );
  });

  it('uses mci.json of the working directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mci-cli-'));
    try {
      await writeFile(
        join(dir, 'mci.json'),
        JSON.stringify({
          schemaVersion: '1.0',
          tools: [{ name: 'hi', execution: { type: 'text', text: 'hi' } }],
        }),
      );
      const run = await mci(['validate'], { cwd: dir });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('mci.json is valid: 1 tool from 0 toolsets\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 with every issue: file, line, column, JSON path and message', async () => {
    const run = await mci(['validate', '--file', join(fixtures, 'many-issues.yaml')], { cwd: empty });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: 12 problems (INVALID_TOOL_FILE)');
    expect(lines).toHaveLength(13);
    expect(lines).toContain(
      `  ${join(fixtures, 'many-issues.yaml')}:4:18 tools[0].execution.type: unknown execution type "ftp": expected one of http, cli, file, text, mcp`,
    );
    expect(
      lines.some((line) =>
        /:17:\d+ tools\[3\]\.execution\.retries\.attempts: must be >= 1, got 0$/.test(line),
      ),
    ).toBe(true);
  });

  it('reports issues across the main file and its toolsets, and missing toolsets with every place tried', async () => {
    const run = await mci(['validate', '-f', join(fixtures, 'toolset-broken-tool.yaml')], { cwd: empty });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'broken-tool.mci.yaml:6:5 tools[1].execution.path: required field "path" is missing',
    );
    expect(run.stderr).toMatch(
      /toolset-broken-tool\.yaml:4:5 toolsets\[1\]\.name: toolset "nowhere" not found; tried .*nowhere\/ \(directory\), .*nowhere\.mci\.yml/,
    );
  });

  it('exits 1 for a missing file and for a YAML syntax error with its line', async () => {
    const missing = await mci(['validate', '--file', 'nope.yaml'], { cwd: empty });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: 1 problem (FILE_NOT_FOUND)\n  nope.yaml: file not found\n');
    const syntax = await mci(['validate', '--file', join(fixtures, 'yaml-syntax.yaml')], { cwd: empty });
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toMatch(/yaml-syntax\.yaml:5:3: .*Flow map/);
  });

  it('reports broken templates, env values not set, and skipped MCP servers; -e sets values', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mci-cli-'));
    try {
      const file = join(dir, 'tools.yaml');
      await writeFile(
        file,
        [
          "schemaVersion: '1.0'",
          'mcp_servers:',
          '  everything: { command: node, args: [server.js] }',
          'tools:',
          '  - name: key',
          '    execution: { type: http, url: "{{env.BASE_URL}}/x", auth: { type: bearer, token: "{{env.TOKEN}}" } }',
        ].join('\n'),
      );
      const unset = await mci(['validate', '-f', file], { cwd: dir, env: { BASE_URL: '', TOKEN: '' } });
      expect(unset.code).toBe(0);
      expect(unset.stdout).toBe(
        [
          'tools.yaml is valid: 1 tool from 0 toolsets',
          '  1 MCP server skipped (use --mcp to load their tools)',
          '',
        ].join('\n'),
      );
      const env = { ...process.env };
      delete env.BASE_URL;
      delete env.TOKEN;
      const withE = await mci(['validate', '-f', file, '-e', 'BASE_URL=http://127.0.0.1:1'], { cwd: dir });
      expect(withE.stdout).toContain('env not set: TOKEN (');
      expect(withE.stdout).not.toContain('BASE_URL');

      await writeFile(
        file,
        "schemaVersion: '1.0'\ntools:\n  - name: broken\n    execution: { type: text, text: '@if(props.a)yes' }\n",
      );
      const broken = await mci(['validate', '-f', file], { cwd: dir });
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(
        /^error: 1 template problem\n {2}tools\.yaml tools\.broken\.execution\.text: .+/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a malformed -e value as a usage error (exit 2)', async () => {
    const run = await mci(['validate', '-e', 'NOEQUALS'], { cwd: empty });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected KEY=VALUE, got "NOEQUALS"');
  });

  it('has --help', async () => {
    const run = await mci(['validate', '--help'], { cwd: empty });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: mci validate [options]');
    expect(run.stdout).toContain('--env <KEY=VALUE>');
  });
});

describe('mci list', () => {
  const exampleNames = [
    'greet',
    'shopping_list',
    'api_get',
    'api_post',
    'read_note',
    'render_report',
    'current_time',
    'list_notes',
    'echo',
  ];

  it('prints a table of the example tools (disabled and filtered-out tools absent)', async () => {
    const run = await mci(['list'], { cwd: empty });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +TOOLSET +TYPE +TAGS +DESCRIPTION$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(exampleNames);
    expect(lines[1]).toMatch(/^greet +- +text +text,demo +Returns a greeting/);
    expect(run.stdout).not.toContain('legacy_greet');
    expect(run.stdout).not.toContain('disk_usage');
  });

  it('prints JSON with name, title, description, tags, annotations, inputSchema and toolset', async () => {
    const run = await mci(['list', '--format', 'json'], { cwd: empty });
    expect(run.code).toBe(0);
    const tools = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(tools.map((tool) => tool.name)).toEqual(exampleNames);
    expect(Object.keys(tools[0]!)).toEqual([
      'name',
      'title',
      'description',
      'tags',
      'annotations',
      'inputSchema',
      'toolset',
    ]);
    expect(tools[0]).toMatchObject({
      name: 'greet',
      title: 'Greet someone',
      tags: ['text', 'demo'],
      toolset: null,
      inputSchema: { type: 'object', required: ['name'] },
    });
    expect(tools.find((tool) => tool.name === 'current_time')).toMatchObject({
      toolset: 'workspace',
      inputSchema: null,
    });
  });

  it('prints YAML with the same content as JSON', async () => {
    const [json, yaml] = await Promise.all([
      mci(['list', '--format', 'json'], { cwd: empty }),
      mci(['list', '--format', 'yaml'], { cwd: empty }),
    ]);
    expect(parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });

  it.each([
    [
      ['--filter', 'only:greet,echo'],
      ['greet', 'echo'],
    ],
    [['--filter', 'except:greet, echo'], exampleNames.filter((name) => name !== 'greet' && name !== 'echo')],
    [
      ['--filter', 'tags:http,file'],
      ['api_get', 'api_post', 'read_note', 'render_report'],
    ],
    [['--filter', 'withoutTags:demo'], []],
    [
      ['--filter', 'toolsets:http-demo'],
      ['api_get', 'api_post'],
    ],
    [
      ['--filter', 'toolsets:workspace', '--filter', 'tags:cli', '--filter', 'except:echo'],
      ['current_time', 'list_notes'],
    ],
  ])('filters with %j', async (args, expected) => {
    const run = await mci(['list', ...args, '--format', 'json'], { cwd: empty });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { name: string }[]).map((tool) => tool.name)).toEqual(expected);
  });

  it('says so when no tool matches', async () => {
    const run = await mci(['list', '--filter', 'only:nothing'], { cwd: empty });
    expect(run).toMatchObject({ code: 0, stdout: 'no tools match\n' });
  });

  it('rejects an unknown filter, an empty filter and an unknown format (usage errors, exit 2)', async () => {
    const unknown = await mci(['list', '--filter', 'name:greet'], { cwd: empty });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown filter "name"');
    const emptyFilter = await mci(['list', '--filter', 'tags: , '], { cwd: empty });
    expect(emptyFilter.code).toBe(2);
    expect(emptyFilter.stderr).toContain('filter "tags" needs a comma-separated list');
    const format = await mci(['list', '--format', 'xml'], { cwd: empty });
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/Allowed choices are table, json, yaml/);
  });

  it('exits 1 with the issues of an invalid file', async () => {
    const run = await mci(['list', '--file', join(fixtures, 'duplicate-tool.yaml')], { cwd: empty });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^error: 1 problem \(DUPLICATE_TOOL\)\n {2}.*shared\.mci\.yaml:3:5 tools\[0\]\.name: duplicate tool name "greet"/,
    );
  });

  it('has --help', async () => {
    const run = await mci(['list', '--help'], { cwd: empty });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: mci list [options]');
    expect(run.stdout).toMatch(
      /--filter <kind:values> +only:a,b \| except:a \| tags:x,y \| withoutTags:x \|\s+toolsets:s/,
    );
    expect(run.stdout).not.toContain('(default: [])');
  });
});
