/**
 * Pictures and files a program makes with `output.image()` and `output.file()`: the rules their
 * names, media types and data follow, checked by the worker (what the isolate sends is untrusted)
 * and by the server before it serves a file.
 */

/** A file a program made with `output.file(name, data, mimeType)`. */
export interface RunFile {
  /** The file's name: 1 to {@link MAX_FILE_NAME_LENGTH} characters, see {@link fileNameProblem}. */
  name: string;
  /** A `type/subtype` media type, for example `text/csv`. */
  mimeType: string;
  data: Uint8Array;
}

/** The longest file name, in characters. */
export const MAX_FILE_NAME_LENGTH = 200;

/** `type/subtype` (RFC 6838 restricted names, lower or upper case), no parameters. */
const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/** Control characters, path separators and characters Windows forbids in names. */
const BAD_NAME_CHARACTER = /[\u0000-\u001f\u007f/\\:*?"<>|]/;

/**
 * Why `name` cannot name a file of a run, or `undefined` when it can: it must be a string of 1 to
 * {@link MAX_FILE_NAME_LENGTH} characters with no path separator (`/`, `\`), no `..`, no control
 * character nor any of `: * ? " < > |`, and must not start or end with a space.
 */
export function fileNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'the name must be a string';
  if (name.length === 0) return 'the name is empty';
  if (name.length > MAX_FILE_NAME_LENGTH)
    return `the name is ${name.length} characters long, over the limit of ${MAX_FILE_NAME_LENGTH}`;
  if (name.includes('..')) return `the name ${JSON.stringify(name)} contains ".."`;
  if (BAD_NAME_CHARACTER.test(name))
    return `the name ${JSON.stringify(name)} contains a path separator or a character not allowed in file names`;
  if (name.trim() !== name) return `the name ${JSON.stringify(name)} starts or ends with a space`;
  return undefined;
}

/** Whether `mimeType` is a `type/subtype` media type (no parameters), for example `image/png`. */
export function isMimeType(mimeType: unknown): mimeType is string {
  return typeof mimeType === 'string' && MIME_TYPE.test(mimeType);
}

/**
 * The bytes of `data` as the isolate sent them: a copy of an `ArrayBuffer` or any view, or a string
 * (`text` decides: UTF-8 text, else base64); `undefined` for anything else, or a string that is not
 * base64 when `text` is false.
 */
export function bytesOf(data: unknown, text: boolean): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (typeof data !== 'string') return undefined;
  if (text) return Buffer.from(data, 'utf8');
  const compact = data.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return undefined;
  return Buffer.from(compact, 'base64');
}
