import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { raceAbort } from '../race-abort.ts';
import { ToolError } from '../tool-error.ts';

/** An MCP server config with every template already rendered. */
export type McpServerTarget =
  | {
      type: 'stdio';
      command: string;
      args?: readonly string[] | undefined;
      env?: Record<string, string> | undefined;
      cwd?: string | undefined;
    }
  | { type: 'http'; url: string; headers?: Record<string, string> | undefined };

/** The client name and version this package announces to MCP servers. */
const CLIENT_INFO = { name: 'mci-tools', version: '0.1.0' };
/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000;

/**
 * One lazily opened MCP client connection, shared by concurrent callers: the first call connects
 * (stdio child process or Streamable HTTP), later calls reuse it. A call that fails because the
 * connection dropped reconnects once and tries again.
 */
export class McpConnection {
  readonly name: string;
  readonly #target: McpServerTarget;
  /** The open (or opening) connection; `open` once `promise` has resolved to `client`. */
  #entry: { client: Client; promise: Promise<Client>; open: boolean } | undefined;
  #stderrTail = '';
  #closed = false;
  /** Rejects each call in flight: close() ends them at once (a stdio server may take seconds to exit). */
  readonly #inFlight = new Set<(error: Error) => void>();

  constructor(name: string, target: McpServerTarget) {
    this.name = name;
    this.#target = target;
  }

  /** Lists every tool of the server, following `nextCursor` pagination. */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    return this.#withReconnect(async (client) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { signal });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    });
  }

  /**
   * Calls a tool. Protocol errors reject with the server's message; an abort of `signal` rejects
   * with its reason at once, also while the connection is still opening (the SDK tells the server a
   * request in flight was cancelled); {@link close} rejects the calls in flight at once.
   *
   * @param repeatable whether the call may be sent again after the connection closed mid-call (the
   *   tool is read-only or idempotent); a call the server never received is always sent again.
   * @param meta the request's `params._meta` (the W3C trace context `traceparent`, `tracestate`).
   */
  callTool(
    toolName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    repeatable = false,
    meta: Record<string, string> = {},
  ): Promise<CallToolResult> {
    // The SDK never removes the abort listener it adds to a request's signal: it gets a signal of its
    // own per call, linked to the caller's only while the call runs, so a long-lived caller signal
    // neither collects listeners nor cancels long-finished requests when it aborts.
    const own = new AbortController();
    const forward = () => own.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    const call = this.#withReconnect(
      (client) =>
        client.callTool(
          { name: toolName, arguments: args, ...(Object.keys(meta).length > 0 && { _meta: meta }) },
          undefined,
          { signal: own.signal },
        ) as Promise<CallToolResult>,
      repeatable,
      own.signal,
    );
    return this.#untilClosed(call, () => signal?.removeEventListener('abort', forward));
  }

  /** Closes the client (and stops a stdio server). Later calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const closed = new ToolError('RUNNER_CLOSED', `MCP server "${this.name}": the connection was closed`);
    for (const reject of this.#inFlight) reject(closed);
    this.#inFlight.clear();
    const entry = this.#entry;
    this.#entry = undefined;
    // Closing a client that is still connecting stops its server and fails the connect.
    if (entry) await Promise.all([entry.client.close().catch(() => {}), entry.promise.catch(() => {})]);
  }

  /**
   * Runs `operation`; when the connection turns out lost, drops it and runs it once more on a new
   * one. A session the server did not know (404) never ran the request, so it is always repeated; a
   * connection that closed mid-request may have run it, so that is repeated only when `repeatable`.
   * `signal` ends a wait for the connection to open (the operation itself is given it by the caller).
   */
  async #withReconnect<T>(
    operation: (client: Client) => Promise<T>,
    repeatable = true,
    signal?: AbortSignal,
  ): Promise<T> {
    const client = this.#entry?.open ? this.#entry.client : await this.#connected(signal);
    try {
      return await operation(client);
    } catch (error) {
      const lost = connectionLoss(error);
      if (lost === undefined || this.#closed) throw error;
      this.#drop(client);
      if (lost === 'mid-request' && !repeatable) {
        throw new Error(
          'the connection closed during the call; it was not repeated because the tool is not marked ' +
            'readOnly or idempotent (the next call reconnects)',
          { cause: error },
        );
      }
      return operation(await this.#connected(signal));
    }
  }

  /** Settles with `call`, or rejects as soon as {@link close} runs; `settled` runs when `call` settles. */
  #untilClosed<T>(call: Promise<T>, settled?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#inFlight.add(reject);
      call.then(
        (value) => {
          this.#inFlight.delete(reject);
          settled?.();
          resolve(value);
        },
        (error: unknown) => {
          this.#inFlight.delete(reject);
          settled?.();
          reject(error);
        },
      );
    });
  }

  /** The client once connected; an abort of `signal` ends the wait (the connection goes on opening). */
  #connected(signal: AbortSignal | undefined): Promise<Client> {
    return raceAbort(this.#connect(), signal);
  }

  #connect(): Promise<Client> {
    if (this.#closed)
      return Promise.reject(new ToolError('RUNNER_CLOSED', `MCP server "${this.name}": runner closed`));
    if (!this.#entry) {
      const client = new Client(CLIENT_INFO, { capabilities: {} });
      const entry = { client, promise: this.#open(client), open: false };
      this.#entry = entry;
      entry.promise.then(
        () => {
          entry.open = true;
        },
        () => {
          // A failed connect is not kept: the next call tries again.
          if (this.#entry === entry) this.#entry = undefined;
        },
      );
    }
    return this.#entry.promise;
  }

  async #open(client: Client): Promise<Client> {
    const transport = this.#transport();
    client.onclose = () => {
      // The server went away: the next call opens a new connection.
      if (this.#entry?.client === client) this.#entry = undefined;
    };
    try {
      await client.connect(transport);
      return client;
    } catch (error) {
      await client.close().catch(() => {});
      const stderr = this.#stderrTail.trim();
      throw new ToolError(
        'MCP_SERVER_UNAVAILABLE',
        `MCP server "${this.name}" could not be ${this.#target.type === 'stdio' ? 'started' : 'reached'}: ${
          (error as Error).message
        }${stderr ? ` (stderr: ${stderr})` : ''}`,
        { cause: error },
      );
    }
  }

  #drop(client: Client): void {
    if (this.#entry?.client === client) this.#entry = undefined;
    void client.close().catch(() => {});
  }

  #transport(): Transport {
    const target = this.#target;
    if (target.type === 'http') {
      return new StreamableHTTPClientTransport(new URL(target.url), {
        requestInit: { headers: target.headers ?? {} },
      });
    }
    const transport = new StdioClientTransport({
      command: target.command,
      args: [...(target.args ?? [])],
      env: { ...getDefaultEnvironment(), ...target.env },
      cwd: target.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }
}

/**
 * How a request failed for want of a connection: an HTTP session the server no longer knows (404: it
 * restarted; MCP asks the client to start a new session), or a connection that closed while the
 * request was out (the stdio server exited). Anything else is not a connection loss.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management
 */
function connectionLoss(error: unknown): 'unknown-session' | 'mid-request' | undefined {
  if (error instanceof StreamableHTTPError && error.code === 404) return 'unknown-session';
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return 'mid-request';
  return undefined;
}
