import type { McpServerConfig } from '@mci/schema';
import { ToolError } from '../tool-error.ts';
import { McpConnection } from './mcp-connection.ts';
import { renderServerTarget } from './mcp-server-target.ts';

/** The MCP connections of one runner: one per server, created on first use, closed together. */
export class McpConnections {
  readonly #servers: Record<string, McpServerConfig>;
  readonly #env: Record<string, string | undefined>;
  readonly #open = new Map<string, McpConnection>();
  #closing: Promise<void> | undefined;

  constructor(servers: Record<string, McpServerConfig>, env: Record<string, string | undefined>) {
    this.#servers = servers;
    this.#env = env;
  }

  /**
   * The connection to `serverName` (not connected until its first call).
   *
   * @throws {ToolError} `MCP_SERVER_UNAVAILABLE` for a server that is not declared.
   * @throws {TemplateError} when the server config's templates do not resolve.
   */
  get(serverName: string): McpConnection {
    let connection = this.#open.get(serverName);
    if (!connection) {
      const config = this.#servers[serverName];
      if (!config)
        throw new ToolError(
          'MCP_SERVER_UNAVAILABLE',
          `MCP server "${serverName}" is not declared in mcp_servers`,
        );
      connection = new McpConnection(serverName, renderServerTarget(serverName, config, this.#env));
      this.#open.set(serverName, connection);
    }
    return connection;
  }

  /** Closes every connection (stopping stdio servers). Idempotent: later calls wait for the first. */
  close(): Promise<void> {
    if (!this.#closing) {
      const connections = [...this.#open.values()];
      this.#open.clear();
      this.#closing = Promise.all(connections.map((connection) => connection.close())).then(() => {});
    }
    return this.#closing;
  }
}
