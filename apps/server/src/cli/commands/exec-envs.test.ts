import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnMci } from '@mci/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-exec-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(path: string, value: unknown): Promise<string> {
  const file = join(dir, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

const toolFile = {
  schemaVersion: '1.0',
  tools: [
    {
      name: 'greet',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string' }, punct: { type: 'string', default: '!' } },
        required: ['name'],
      },
      execution: {
        type: 'text',
        text: 'Hello {{props.name}} from {{env.MCI_TEST_TOWN | "nowhere"}}{{props.punct}}',
      },
    },
    { name: 'fails', execution: { type: 'cli', command: 'sh', args: ['-c', 'echo nope >&2; exit 4'] } },
  ],
};

describe('mci exec', { timeout: 60_000 }, () => {
  it('prints the result as JSON and exits 0, with props, -e values and defaults', async () => {
    await write('mci.json', toolFile);
    const run = await mci(['exec', 'greet', '--props', '{"name":"Ann"}', '-e', 'MCI_TEST_TOWN=Oslo'], {
      cwd: dir,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'Hello Ann from Oslo!' }],
    });

    await write('props.json', { name: 'Bo', punct: '?' });
    const fromFile = await mci(['exec', 'greet', '--props-file', 'props.json'], { cwd: dir });
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout).content[0].text).toBe('Hello Bo from nowhere?');
  });

  it('exits 1 with the error result when the tool fails', async () => {
    await write('tools.json', toolFile);
    const invalid = await mci(['exec', 'greet', '--file', 'tools.json'], { cwd: dir });
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout)).toMatchObject({
      isError: true,
      error: 'Invalid props: props.name is required',
    });

    const failed = await mci(['exec', 'fails', '-f', 'tools.json'], { cwd: dir });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      isError: true,
      error: 'Command exited with code 4: nope',
      metadata: { exit_code: 4 },
    });
  });

  it('exits 2 for an unknown tool', async () => {
    await write('mci.json', toolFile);
    const unknown = await mci(['exec', 'nope'], { cwd: dir });
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain('Tool "nope" not found (available: greet, fails)');
  });

  it('exits 2 for bad arguments', async () => {
    await write('mci.json', toolFile);
    const [badJson, both, badEnv, noTool] = await Promise.all([
      mci(['exec', 'greet', '--props', '{name'], { cwd: dir }),
      mci(['exec', 'greet', '--props', '{}', '--props-file', 'x.json'], { cwd: dir }),
      mci(['exec', 'greet', '-e', 'NOEQUALS'], { cwd: dir }),
      mci(['exec'], { cwd: dir }),
    ]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('--props is not valid JSON');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('either --props or --props-file');
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('expected KEY=VALUE');
    expect(noTool.code).toBe(2);
    expect(noTool.stderr).toContain("missing required argument 'tool'");
  });

  it('exits 2 when the tool file does not load', async () => {
    await write('broken.json', {
      schemaVersion: '1.0',
      tools: [{ name: 'x', execution: { type: 'teleport' } }],
    });
    const broken = await mci(['exec', 'x', '--file', 'broken.json'], { cwd: dir });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('broken.json');
    expect(broken.stderr).toContain('tools[0].execution');
  });

  it('runs MCP server tools and exits once done', async () => {
    await write('mci.json', {
      schemaVersion: '1.0',
      mcp_servers: { everything: { command: process.execPath, args: [everything] } },
    });
    // The real program: it must end by itself once the MCP server's tool answered.
    const run = await spawnMci(['exec', 'echo', '--props', '{"message":"hi"}'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'Echo: hi' }],
      metadata: { mcp_server: 'everything', mcp_tool: 'echo' },
    });
  });
});

describe('mci envs', { timeout: 60_000 }, () => {
  beforeEach(async () => {
    await write('mci.json', {
      schemaVersion: '1.0',
      toolsets: ['remote'],
      tools: [
        {
          name: 'hello',
          execution: { type: 'text', text: '{{env.MCI_TEST_GREETING}} {{env.MCI_TEST_NAME | "you"}}' },
        },
      ],
      mcp_servers: {
        gh: {
          command: 'gh-mcp',
          args: ['--token', '{{env.MCI_TEST_GH_TOKEN}}'],
          env: { HOME_DIR: '{{env.MCI_TEST_GREETING}}' },
        },
        web: {
          type: 'http',
          url: 'https://example.com/mcp',
          headers: { Authorization: 'Bearer {{env.MCI_TEST_WEB_KEY}}' },
        },
      },
    });
    await write('mci/remote.mci.json', {
      schemaVersion: '1.0',
      tools: [
        {
          name: 'fetch',
          execution: {
            type: 'http',
            url: '{{env.MCI_TEST_BASE}}/x',
            auth: { type: 'bearer', token: '{{env.MCI_TEST_WEB_KEY}}' },
          },
        },
      ],
    });
  });

  it('lists each variable with where it is used and whether it is set, without contacting MCP servers', async () => {
    const run = await mci(['envs', '--format', 'json', '-e', 'MCI_TEST_NAME=x-long-value'], {
      cwd: dir,
      env: {
        MCI_TEST_GREETING: 'hi',
        MCI_PUBLIC_ENV: 'MCI_TEST_GREETING',
      },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const main = join(dir, 'mci.json');
    const toolset = join(dir, 'mci', 'remote.mci.json');
    expect(JSON.parse(run.stdout)).toEqual([
      {
        name: 'MCI_TEST_BASE',
        set: false,
        secret: true,
        usedIn: [{ file: toolset, tool: 'fetch', toolset: 'remote', field: 'tools.fetch.execution.url' }],
      },
      {
        name: 'MCI_TEST_GH_TOKEN',
        set: false,
        secret: true,
        usedIn: [{ file: main, field: 'mcp_servers.gh.args[1]' }],
      },
      {
        name: 'MCI_TEST_GREETING',
        set: true,
        secret: false,
        usedIn: [
          { file: main, tool: 'hello', field: 'tools.hello.execution.text' },
          { file: main, field: 'mcp_servers.gh.env.HOME_DIR' },
        ],
      },
      {
        name: 'MCI_TEST_NAME',
        set: true,
        secret: true,
        usedIn: [{ file: main, tool: 'hello', field: 'tools.hello.execution.text', default: '"you"' }],
      },
      {
        name: 'MCI_TEST_WEB_KEY',
        set: false,
        secret: true,
        usedIn: [
          { file: toolset, tool: 'fetch', toolset: 'remote', field: 'tools.fetch.execution.auth.token' },
          { file: main, field: 'mcp_servers.web.headers.Authorization' },
        ],
      },
    ]);
  });

  it('prints a table by default', async () => {
    const run = await mci(['envs'], { cwd: dir });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^MCI_TEST_BASE\s+NOT SET {2}secret$/);
    expect(lines[1]).toBe('  tools.fetch.execution.url  mci/remote.mci.json (toolset remote)');
    expect(lines.at(-1)).toBe('5 variables, 5 not set (1 with a default wherever used)');
  });

  it('says when a template has a default for a variable that is not set', async () => {
    const run = await mci(['envs'], { cwd: dir });
    const lines = run.stdout.trimEnd().split('\n');
    const at = lines.findIndex((line) => line.startsWith('MCI_TEST_NAME'));
    expect(lines[at]).toMatch(/^MCI_TEST_NAME\s+NOT SET {2}secret {2}\(defaults used\)$/);
    expect(lines[at + 1]).toBe('  tools.hello.execution.text  mci.json  default "you"');
    // A variable that a use needs gets no such note, even where another use has a default.
    expect(lines.find((line) => line.startsWith('MCI_TEST_GREETING'))).toMatch(/NOT SET {2}secret$/);
  });

  it('exits 1 when a secret is set to a value the server would refuse, saying how to mark it public', async () => {
    const run = await mci(['envs'], { cwd: dir, env: { MCI_TEST_BASE: 'abc' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'error: MCI_TEST_BASE is a secret of 3 characters; the server refuses secrets under 8 (list it in publicEnv if it is not a secret)\n',
    );
    const marked = await mci(['envs'], {
      cwd: dir,
      env: { MCI_TEST_BASE: 'abc', MCI_PUBLIC_ENV: 'MCI_TEST_BASE' },
    });
    expect(marked.code).toBe(0);
    expect(marked.stdout.split('\n')[0]).toMatch(/^MCI_TEST_BASE\s+set {6}public$/);
  });

  it('exits 1 on a broken template and 2 when the file does not load', async () => {
    await write('bad.json', {
      schemaVersion: '1.0',
      tools: [{ name: 'b', execution: { type: 'text', text: '{{env.MCI_OK}} @if(x' } }],
    });
    const bad = await mci(['envs', '--file', 'bad.json'], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('tools.b.execution.text');
    const missing = await mci(['envs', '--file', 'missing.json'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing.json');
  });
});
