/**
 * Pictures and files as output values. `output.image(data, mimeType)` in a program, and image content
 * of a tool result a program outputs, are {@link ImageOutput}s (the MCP image content shape, bytes
 * inline); `output.file(name, data, mimeType)` stores the bytes with the run and outputs a
 * {@link FileOutput} that points at them.
 * @see docs/protocol.md#pictures-and-files
 */

/** A picture, its bytes inline: `{"type": "image", "mimeType": "image/png", "data": "<base64>"}`. */
export interface ImageOutput {
  type: 'image';
  /** An `image/*` media type. */
  mimeType: string;
  /** The bytes, base64-encoded. */
  data: string;
}

/**
 * A file of a run: `{"type": "file", "name": "report.csv", "mimeType": "text/csv", "size": 120,
 * "uri": "/processes/7/runs/1/files/report.csv"}`. `uri` is the path of `GET
 * /processes/:pid/runs/:n/files/:name` on the server, readable by whoever may read the process.
 */
export interface FileOutput {
  type: 'file';
  name: string;
  mimeType: string;
  /** Bytes. */
  size: number;
  uri: string;
}

/** The path of file `name` of run `run` of process `pid` (`/processes/7/runs/1/files/a%20b.txt`). */
export function runFileUri(pid: number, run: number, name: string): string {
  return `/processes/${pid}/runs/${run}/files/${encodeURIComponent(name)}`;
}

/** Whether an output value (in the output encoding) is an {@link ImageOutput}. */
export function isImageOutput(value: unknown): value is ImageOutput {
  const v = value as Partial<ImageOutput> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.type === 'image' &&
    typeof v.mimeType === 'string' &&
    typeof v.data === 'string'
  );
}

/** Whether an output value (in the output encoding) is a {@link FileOutput}. */
export function isFileOutput(value: unknown): value is FileOutput {
  const v = value as Partial<FileOutput> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.type === 'file' &&
    typeof v.name === 'string' &&
    typeof v.mimeType === 'string' &&
    typeof v.size === 'number' &&
    typeof v.uri === 'string'
  );
}

/** How deep into an output value pictures and sounds are looked for. */
const MAX_MEDIA_DEPTH = 8;

/**
 * `value` (an output value in the output encoding) with the base64 `data` of every picture and sound
 * in it (`{type: 'image' | 'audio', mimeType, data}`, an `output.image()` value or a tool result's
 * content) replaced by a short note, `"[image/png, 120 bytes]"`: what a text rendering shows, the
 * bytes going as pictures where the interface has them. Returns `value` itself when it has none.
 */
export function withoutMediaData(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_MEDIA_DEPTH) return value;
  const item = value as { type?: unknown; data?: unknown; mimeType?: unknown };
  if (
    (item.type === 'image' || item.type === 'audio') &&
    typeof item.data === 'string' &&
    typeof item.mimeType === 'string'
  )
    return { ...item, data: `[${item.mimeType}, ${base64Size(item.data)} bytes]` };
  let changed = false;
  const entries = Object.entries(value).map(([key, child]) => {
    const next = withoutMediaData(child, depth + 1);
    if (next !== child) changed = true;
    return [key, next] as const;
  });
  if (!changed) return value;
  return Array.isArray(value) ? entries.map(([, child]) => child) : Object.fromEntries(entries);
}

/**
 * The pictures in `value` (an output value in the output encoding), in order: `output.image()` values
 * and the image content of tool results, looked for as deep as {@link withoutMediaData} looks (a tool
 * result's `content` is at depth 2). Each comes as its media type and base64 bytes.
 */
export function imagesIn(value: unknown): { mimeType: string; data: string }[] {
  const found: { mimeType: string; data: string }[] = [];
  const walk = (item: unknown, depth: number): void => {
    if (typeof item !== 'object' || item === null || depth > MAX_MEDIA_DEPTH) return;
    if (isImageOutput(item)) found.push({ mimeType: item.mimeType, data: item.data });
    else for (const child of Object.values(item)) walk(child, depth + 1);
  };
  walk(value, 0);
  return found;
}

/** The number of bytes base64 text `data` holds. */
function base64Size(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
