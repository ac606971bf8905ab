import { useEffect, useState } from 'react';
import type { JsonSchema } from '../components/json-schema.ts';
import { apiGet } from '../connection/api-fetch.ts';
import { useConnection } from '../connection/connection-context.ts';

/** A tool as `GET /tools` lists it. */
export interface ToolInfo {
  name: string;
  /** A human-readable name (MCI `title`). */
  title?: string;
  /** Markdown. */
  description?: string;
  inputSchema?: JsonSchema;
  annotations?: Record<string, unknown>;
  tags?: string[];
  /** The policy's decision for calls of the tool (docs/approvals.md), and the rule that gave it. */
  decision?: 'allow' | 'ask' | 'deny';
  rule?: number;
  /** The secrets the tool uses (environment variables the host reads), and whether each is set. */
  secrets?: Array<{ name: string; set: boolean }>;
}

/** What {@link useTools} returns. */
export interface ToolsView {
  tools: ToolInfo[] | undefined;
  /** `GET /tools.d.ts`: the TypeScript declarations of the sandbox globals and every tool. */
  declarations: string | undefined;
  error: string | undefined;
}

/** The tools of the server's tool file and their TypeScript declarations. */
export function useTools(): ToolsView {
  const { token } = useConnection();
  const [view, setView] = useState<ToolsView>({
    tools: undefined,
    declarations: undefined,
    error: undefined,
  });
  useEffect(() => {
    let active = true;
    Promise.all([
      apiGet<{ tools: ToolInfo[] }>('/tools', token),
      apiGet<string>('/tools.d.ts', token, 'text'),
    ])
      .then(
        ([list, declarations]) => active && setView({ tools: list.tools, declarations, error: undefined }),
      )
      .catch((error: Error) => active && setView((previous) => ({ ...previous, error: error.message })));
    return () => {
      active = false;
    };
  }, [token]);
  return view;
}

/** The declaration of tool `name` in `declarations` (its doc comment and signature), if found. */
export function toolDeclaration(declarations: string, name: string): string | undefined {
  const keys = [`  ${name}(`, `  '${name}'(`, `  "${name}"(`];
  let entry: string[] = [];
  for (const line of declarations.split('\n')) {
    entry.push(line);
    if (line.startsWith('declare const tools') || line === '};') entry = [];
    if (line.endsWith('): Promise<ToolResult>;')) {
      const signature = entry.find(
        (part) => !part.trimStart().startsWith('/**') && !part.trimStart().startsWith('*'),
      );
      if (signature !== undefined && keys.some((key) => signature.startsWith(key)))
        return entry.map((part) => part.slice(2)).join('\n');
      entry = [];
    }
  }
  return undefined;
}
