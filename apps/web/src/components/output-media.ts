/**
 * Something an output value holds that the console shows as itself: a picture or a sound (MCI/MCP
 * content `{type: 'image' | 'audio', mimeType, data}` with base64 data: `output.image()` values and
 * tool results' content) or a link a tool returned (`{type: 'resource_link', uri, name}` with an
 * `http:` or `https:` uri; other schemes are not made clickable).
 */
export type OutputMedia =
  | { kind: 'image'; src: string; mimeType: string }
  | { kind: 'audio'; src: string; mimeType: string }
  | { kind: 'link'; href: string; name: string };

/** How deep into an output value media are looked for (a tool result's `content` is at depth 2). */
const MAX_DEPTH = 8;

/** The media anywhere in `value`, in order. */
export function findMedia(value: unknown, found: OutputMedia[] = [], depth = 0): OutputMedia[] {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return found;
  const item = value as { type?: unknown; data?: unknown; mimeType?: unknown; uri?: unknown; name?: unknown };
  if (
    (item.type === 'image' || item.type === 'audio') &&
    typeof item.data === 'string' &&
    typeof item.mimeType === 'string' &&
    item.mimeType.startsWith(`${item.type}/`)
  ) {
    found.push({
      kind: item.type,
      src: `data:${item.mimeType};base64,${item.data}`,
      mimeType: item.mimeType,
    });
    return found;
  }
  if (item.type === 'resource_link' && typeof item.uri === 'string' && typeof item.name === 'string') {
    if (/^https?:\/\//i.test(item.uri)) found.push({ kind: 'link', href: item.uri, name: item.name });
    return found;
  }
  for (const child of Object.values(value)) findMedia(child, found, depth + 1);
  return found;
}
