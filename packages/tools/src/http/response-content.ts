import type { Content } from '../tool-result.ts';

/** A response body mapped to result content. */
export interface MappedBody {
  content: Content[];
  /** The parsed body, for JSON responses. */
  structuredContent?: unknown;
  /** The body as text (empty for binary bodies), for error messages. */
  text: string;
}

/** What a `Content-Type` header says about how to read and map a body. */
export interface BodyType {
  /** Lower-cased, without parameters; empty without a header. */
  readonly mimeType: string;
  /** `image/*` and `audio/*` bodies become base64 content; anything else is text. */
  readonly kind: 'image' | 'audio' | 'text';
  /** The `charset` parameter, for text. */
  readonly charset: string | undefined;
  /** `application/json` or `*+json`: the text is parsed for `structuredContent`. */
  readonly json: boolean;
}

/** The body type of a response with this `Content-Type` header (or none). */
export function bodyTypeOf(header: string | undefined): BodyType {
  return header ? parseContentType(header) : NO_CONTENT_TYPE;
}

/**
 * Maps a response body to content by its type: `image/*` and `audio/*` become base64 image/audio
 * content; anything else is decoded as text (the `charset` parameter, else UTF-8), and a JSON body
 * (`application/json`, `*+json`) also yields `structuredContent`.
 */
export function mapBody(bytes: Uint8Array, type: BodyType): MappedBody {
  if (type.kind !== 'text') {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    return { content: [{ type: type.kind, data, mimeType: type.mimeType }], text: '' };
  }
  const text = decode(bytes, type.charset);
  const mapped: MappedBody = { content: [{ type: 'text', text }], text };
  if (type.json) {
    try {
      mapped.structuredContent = JSON.parse(text);
    } catch {
      // A server that labels a non-JSON body as JSON still gets its text through.
    }
  }
  return mapped;
}

function bodyType(mimeType: string, charset: string | undefined): BodyType {
  const kind = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'text';
  return { mimeType, kind, charset, json: mimeType === 'application/json' || mimeType.endsWith('+json') };
}

const NO_CONTENT_TYPE = bodyType('', undefined);

function parseContentType(header: string): BodyType {
  const [type = '', ...params] = header.split(';');
  let charset: string | undefined;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value) charset = value.trim().replace(/^"|"$/g, '');
  }
  return bodyType(type.trim().toLowerCase(), charset);
}

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
