import { isFileOutput } from '@mci/protocol';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/** How deep into an output value pictures are looked for (a tool result's `content` is at depth 2). */
const MAX_DEPTH = 8;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/**
 * The MCP content items for the pictures, sounds and files in a run's output values, in order:
 * `output.image()` values and the image or audio content of tool results become `image` / `audio`
 * items, `output.file()` values `resource_link` items (their `uri` the path of the file on this
 * server, `GET /processes/:pid/runs/:n/files/:name`), and the `resource_link` and embedded `resource`
 * items of tool results pass as they are.
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result
 */
export function mediaContent(outputs: readonly unknown[]): ContentBlock[] {
  const found: ContentBlock[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (!isRecord(value) || depth > MAX_DEPTH) return;
    const item = mediaItem(value);
    if (item) {
      found.push(item);
      return;
    }
    for (const child of Object.values(value)) walk(child, depth + 1);
  };
  for (const output of outputs) walk(output, 0);
  return found;
}

function mediaItem(value: Record<string, unknown>): ContentBlock | undefined {
  const { type } = value;
  if (
    (type === 'image' || type === 'audio') &&
    typeof value.data === 'string' &&
    typeof value.mimeType === 'string'
  )
    return { type, data: value.data, mimeType: value.mimeType };
  if (isFileOutput(value))
    return { type: 'resource_link', uri: value.uri, name: value.name, mimeType: value.mimeType };
  if (type === 'resource_link' && typeof value.uri === 'string' && typeof value.name === 'string')
    return value as ContentBlock;
  if (type === 'resource' && isRecord(value.resource) && typeof value.resource.uri === 'string')
    return value as ContentBlock;
  return undefined;
}
