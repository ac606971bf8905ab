import type { ErrorData } from '../bootstrap/bootstrap.ts';
import { bytesOf, fileNameProblem, isMimeType, type RunFile } from '../run-file.ts';

/** What `output.image(data, mimeType)` sends: checked, or why it was refused. */
export type CheckedImage = { image: { mimeType: string; data: Uint8Array } } | { error: ErrorData };

/** What `output.file(name, data, mimeType)` sends: checked, or why it was refused. */
export type CheckedFile = { file: RunFile } | { error: ErrorData };

const typeError = (message: string): { error: ErrorData } => ({ error: { name: 'TypeError', message } });

/**
 * Checks the arguments of `output.image(data, mimeType)` as the isolate sent them (untrusted):
 * `data` bytes or base64 text, `mimeType` an `image/*` media type.
 */
export function checkImage(args: unknown): CheckedImage {
  const [data, mimeType] = Array.isArray(args) ? args : [];
  if (!isMimeType(mimeType) || !mimeType.toLowerCase().startsWith('image/'))
    return typeError(
      `output.image(): the mimeType must be an image media type such as "image/png", got ${describe(mimeType)}`,
    );
  const bytes = bytesOf(data, false);
  if (!bytes)
    return typeError(
      'output.image(): the data must be a Uint8Array, an ArrayBuffer or a base64 string of the image',
    );
  return { image: { mimeType, data: bytes } };
}

/**
 * Checks the arguments of `output.file(name, data, mimeType)` as the isolate sent them (untrusted):
 * a valid name (see {@link fileNameProblem}), bytes or UTF-8 text, a `type/subtype` media type
 * (`text/plain` for text and `application/octet-stream` for bytes when absent).
 */
export function checkFile(args: unknown): CheckedFile {
  const [name, data, given] = Array.isArray(args) ? args : [];
  const problem = fileNameProblem(name);
  if (problem) return typeError(`output.file(): ${problem}`);
  const mimeType = given ?? (typeof data === 'string' ? 'text/plain' : 'application/octet-stream');
  if (!isMimeType(mimeType))
    return typeError(
      `output.file(): the mimeType must be a media type such as "text/csv", got ${describe(given)}`,
    );
  const bytes = bytesOf(data, true);
  if (!bytes) return typeError('output.file(): the data must be a string, a Uint8Array or an ArrayBuffer');
  return { file: { name: name as string, mimeType, data: bytes } };
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
}
