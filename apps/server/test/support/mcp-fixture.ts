import { createRequire } from 'node:module';
import { mciArgv } from '@mci/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll } from 'vitest';
import { createServer, type MciServer, type ServerOptions } from '../../src/index.ts';
import { toolFileDir } from './greet-tools.ts';

// Real parts for the MCP suites: a tool file with a text tool, a cli tool and the image tool of
// @modelcontextprotocol/server-everything (over stdio), `mci mcp` spawned through the SDK's stdio
// client transport, and the SDK's Streamable HTTP client transport.

const EVERYTHING = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

/** A temporary directory holding `tools.yaml`; `dispose` removes it. */
export function makeToolFile(): { dir: string; file: string; dispose(): void } {
  const tools = toolFileDir(
    'mci-mcp-',
    `schemaVersion: '1.0'
mcp_servers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    config: { filter: only, filterValue: 'get-tiny-image, get-resource-reference' }
tools:
  - name: greet
    title: Greet someone
    description: Returns a greeting for name.
    tags: [text, demo]
    annotations: { readOnlyHint: true, openWorldHint: false }
    inputSchema:
      type: object
      properties: { name: { type: string } }
      required: [name]
    execution: { type: text, text: 'Hello, {{props.name}}.' }
  - name: shout
    description: Upper-cases a word with a command.
    tags: [cli]
    inputSchema:
      type: object
      properties: { word: { type: string } }
      required: [word]
    execution:
      type: cli
      command: ${JSON.stringify(process.execPath)}
      args: ['-e', 'console.log(process.argv[1].toUpperCase())', '{{props.word}}']
`,
  );
  return { dir: tools.dir, file: tools.file, dispose: () => tools[Symbol.dispose]() };
}

const clientInfo = { name: 'mci-test', version: '1.0.0' };

/**
 * Posts a bare JSON-RPC `initialize` request for `protocolVersion` to `serverUrl`'s `/mcp`, with
 * `headers` added to the ones the Streamable HTTP transport requires, as a client without the SDK
 * (or a web page) sends it.
 */
export function postInitialize(
  serverUrl: string,
  protocolVersion: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${serverUrl}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo },
    }),
  });
}

/** The SDK's Client connected to `mci mcp --file FILE` (spawned). */
export async function stdioClient(file: string, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: mciArgv(['mcp', '--file', file, ...args]),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => {});
  const client = new Client(clientInfo);
  await client.connect(transport);
  return client;
}

/** The SDK's Client connected to `${url}/mcp` over Streamable HTTP, with a bearer token if given. */
export async function httpClient(url: string, token?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    ...(token !== undefined && { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  });
  const client = new Client(clientInfo);
  await client.connect(transport);
  return client;
}

/**
 * An SDK client for one `describe` block, made by `connect` in `beforeAll` and closed in `afterAll`;
 * `client` is there once its `beforeAll` ran.
 */
export function suiteClient(connect: () => Promise<Client>): { readonly client: Client } {
  let client: Client | undefined;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });
  return {
    get client() {
      if (!client) throw new Error('the suite client connects in beforeAll');
      return client;
    },
  };
}

/** What {@link mcpSuiteServer} gives a suite; `server` is there once its `beforeAll` ran. */
export interface McpSuiteServer {
  /** The tool file of {@link makeToolFile}. */
  readonly file: string;
  readonly server: MciServer;
  /** The two ways to reach it, for `describe.each`: `mci mcp` over stdio, `/mcp` over Streamable HTTP. */
  readonly transports: Array<[string, () => Promise<Client>]>;
}

/**
 * The tool file of {@link makeToolFile} and an in-process server on it (port 0, silent logs, an
 * in-memory store) for one suite: started in `beforeAll`, closed and the file removed in `afterAll`.
 */
export function mcpSuiteServer(options: Partial<ServerOptions> = {}): McpSuiteServer {
  const fixture = makeToolFile();
  let server: MciServer | undefined;
  beforeAll(async () => {
    server = await createServer({
      port: 0,
      file: fixture.file,
      logLevel: 'silent',
      concurrency: 2,
      ...options,
    });
  });
  afterAll(async () => {
    await server?.close({ graceMs: 0 });
    fixture.dispose();
  });
  return {
    file: fixture.file,
    get server() {
      if (!server) throw new Error('the suite server starts in beforeAll');
      return server;
    },
    transports: [
      ['stdio', () => stdioClient(fixture.file)],
      ['Streamable HTTP', () => httpClient(server!.url)],
    ],
  };
}
