/** An image found in an output value: MCI/MCP content `{ type: 'image', data, mimeType }`. */
export interface OutputImage {
  src: string;
  mimeType: string;
}

/** Images anywhere in `value` (a tool result's `content` items of type `image`, base64 data). */
export function findImages(value: unknown, found: OutputImage[] = [], depth = 0): OutputImage[] {
  if (value === null || typeof value !== 'object' || depth > 8) return found;
  const item = value as { type?: unknown; data?: unknown; mimeType?: unknown };
  if (
    item.type === 'image' &&
    typeof item.data === 'string' &&
    typeof item.mimeType === 'string' &&
    item.mimeType.startsWith('image/')
  ) {
    found.push({ src: `data:${item.mimeType};base64,${item.data}`, mimeType: item.mimeType });
    return found;
  }
  for (const child of Object.values(value)) findImages(child, found, depth + 1);
  return found;
}
