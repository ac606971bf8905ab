import { collectEnvDefaults, collectEnvReferences, type ToolCollection } from '@mci/schema';

/** One place a tool file uses an environment variable. */
export interface EnvUse {
  /** Absolute path of the file the template is written in. */
  file: string;
  /** JSON path of the field, like `tools.weather.execution.auth.value` or `mcp_servers.github.env.TOKEN`. */
  field: string;
  /** The tool the field belongs to, if any. */
  tool?: string;
  /** The toolset (or MCP server) the tool came from, if any. */
  toolset?: string;
  /**
   * What the template uses when the variable is not set, as written (`'http://127.0.0.1:8787'`):
   * present when every reference to it in this field has a fallback.
   */
  default?: string;
}

/** An environment variable the tools use, where (with the default of each use that has one), and whether it is set. */
export interface EnvUsage {
  name: string;
  /** Whether `env` has a value for it. */
  set: boolean;
  usedIn: EnvUse[];
}

/** A template that could not be read while collecting (its syntax is broken). */
export interface EnvUsageProblem {
  file: string;
  field: string;
  message: string;
}

/**
 * Every `env.X` referenced by the collection's tools (every string of their executions, and
 * `env.*` flag sources) and by its MCP server configs, sorted by name, each with the places it is
 * used and whether `env` sets it. Templates with broken syntax are reported in `problems`.
 */
export function collectEnvUsage(
  collection: ToolCollection,
  env: Record<string, string | undefined> = process.env,
): { variables: EnvUsage[]; problems: EnvUsageProblem[] } {
  const byName = new Map<string, EnvUse[]>();
  const problems: EnvUsageProblem[] = [];
  const scan = (template: string, use: EnvUse) => {
    let names: string[];
    let defaults: Map<string, string>;
    try {
      names = collectEnvReferences(template);
      defaults = collectEnvDefaults(template);
    } catch (error) {
      problems.push({ file: use.file, field: use.field, message: (error as Error).message });
      return;
    }
    for (const name of names) {
      const uses = byName.get(name) ?? [];
      const fallback = defaults.get(name);
      uses.push(fallback === undefined ? use : { ...use, default: fallback });
      byName.set(name, uses);
    }
  };
  const walk = (value: unknown, field: string, use: Omit<EnvUse, 'field'>) => {
    if (typeof value === 'string') scan(value, { ...use, field });
    else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, `${field}[${index}]`, use);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) walk(child, `${field}.${key}`, use);
    }
  };

  for (const tool of collection.tools) {
    const base: Omit<EnvUse, 'field'> = { file: tool.source, tool: tool.name };
    if (tool.toolset !== undefined) base.toolset = tool.toolset;
    const { type: _type, ...execution } = tool.execution;
    if (tool.execution.type === 'cli') {
      const { flags, ...rest } = tool.execution;
      for (const [flag, { from }] of Object.entries(flags ?? {})) {
        if (from.startsWith('env.'))
          scan(`{{${from}}}`, { ...base, field: `tools.${tool.name}.execution.flags.${flag}.from` });
      }
      walk(rest, `tools.${tool.name}.execution`, base);
    } else if (tool.execution.type !== 'mcp') {
      walk(execution, `tools.${tool.name}.execution`, base);
    }
  }
  for (const [name, server] of Object.entries(collection.mcpServers)) {
    const { type: _type, config: _config, ...templated } = server;
    walk(templated, `mcp_servers.${name}`, { file: collection.file });
  }

  const variables = [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, usedIn]) => ({ name, set: env[name] !== undefined, usedIn }));
  return { variables, problems };
}

/** An environment variable a tool reads, and whether it has a value. */
export interface ToolEnvVariable {
  name: string;
  set: boolean;
}

/**
 * The environment variables each tool reads through `{{env.X}}` (in its execution, or in the config of
 * the MCP server it comes from), by tool name, sorted by variable name; tools that read none are absent.
 */
export function envByTool(
  collection: ToolCollection,
  env: Record<string, string | undefined> = process.env,
): Map<string, ToolEnvVariable[]> {
  const byTool = new Map<string, ToolEnvVariable[]>();
  const add = (tool: string, variable: EnvUsage) => {
    const list = byTool.get(tool) ?? [];
    if (!list.some(({ name }) => name === variable.name))
      list.push({ name: variable.name, set: variable.set });
    byTool.set(tool, list);
  };
  const { variables } = collectEnvUsage(collection, env);
  for (const variable of variables) {
    for (const use of variable.usedIn) {
      if (use.tool !== undefined) add(use.tool, variable);
      const server = /^mcp_servers\.([^.[]+)/.exec(use.field)?.[1];
      if (server === undefined) continue;
      for (const tool of collection.tools)
        if (tool.execution.type === 'mcp' && tool.execution.serverName === server) add(tool.name, variable);
    }
  }
  return byTool;
}
