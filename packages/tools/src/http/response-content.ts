import type { Content } from '../tool-result.ts';
import { cachedParse } from './cached-parse.ts';

/** A response body mapped to result content. */
export interface MappedBody {
  content: Content[];
  /** The parsed body, for JSON responses. */
  structuredContent?: unknown;
  /** The body as text (empty for binary bodies), for error messages. */
  text: string;
}

/**
 * Maps a response body to content by its `Content-Type`: `image/*` and `audio/*` become base64
 * image/audio content; anything else is decoded as text (the `charset` parameter, else UTF-8), and a
 * JSON body (`application/json`, `*+json`) also yields `structuredContent`.
 */
export function mapBody(bytes: Uint8Array, contentType: string | undefined): MappedBody {
  const { mimeType, charset } = parseContentType(contentType);
  if (mimeType.startsWith('image/') || mimeType.startsWith('audio/')) {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    const type = mimeType.startsWith('image/') ? 'image' : 'audio';
    return { content: [{ type, data, mimeType }], text: '' };
  }
  const text = decode(bytes, charset);
  const mapped: MappedBody = { content: [{ type: 'text', text }], text };
  if (mimeType === 'application/json' || mimeType.endsWith('+json')) {
    try {
      mapped.structuredContent = JSON.parse(text);
    } catch {
      // A server that labels a non-JSON body as JSON still gets its text through.
    }
  }
  return mapped;
}

interface ContentType {
  readonly mimeType: string;
  readonly charset: string | undefined;
}

const NO_CONTENT_TYPE: ContentType = { mimeType: '', charset: undefined };

function parseContentType(header: string | undefined): ContentType {
  return header ? parseContentTypeHeader(header) : NO_CONTENT_TYPE;
}

/** A server sends the same few Content-Type headers again and again: each is parsed once. */
const parseContentTypeHeader = cachedParse(64, (header): ContentType => {
  const [type = '', ...params] = header.split(';');
  let charset: string | undefined;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value) charset = value.trim().replace(/^"|"$/g, '');
  }
  return Object.freeze({ mimeType: type.trim().toLowerCase(), charset });
});

const utf8 = new TextDecoder('utf-8');

function decode(bytes: Uint8Array, charset: string | undefined): string {
  const label = charset?.toLowerCase();
  if (label === undefined || label === 'utf-8' || label === 'utf8') return utf8.decode(bytes);
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the best guess.
    return utf8.decode(bytes);
  }
}
