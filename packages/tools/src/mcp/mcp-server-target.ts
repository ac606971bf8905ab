import { type McpServerConfig, renderStructured, renderTemplate, type TemplateContext } from '@mci/schema';
import type { McpServerTarget } from './mcp-connection.ts';

/**
 * Renders the `{{env.X}}` templates of an MCP server config (command, args, env values; url, header
 * values) against `env`; props are empty here.
 *
 * @throws {TemplateError} naming the server and the field when a template does not resolve.
 */
export function renderServerTarget(
  serverName: string,
  config: McpServerConfig,
  env: Record<string, string | undefined>,
): McpServerTarget {
  const context: TemplateContext = { props: {}, input: {}, env };
  const render = <T>(field: string, value: T): T => {
    try {
      return (
        typeof value === 'string' ? renderTemplate(value, context) : renderStructured(value, context)
      ) as T;
    } catch (error) {
      if (error instanceof Error) error.message = `mcp_servers.${serverName}.${field}: ${error.message}`;
      throw error;
    }
  };
  if (config.type === 'http') {
    return {
      type: 'http',
      url: render('url', config.url),
      headers: config.headers && render('headers', config.headers),
    };
  }
  return {
    type: 'stdio',
    command: render('command', config.command),
    args: config.args && render('args', config.args),
    env: config.env && render('env', config.env),
  };
}
