import { readFile } from 'node:fs/promises';
import { SchemaError } from './schema-error.ts';

/**
 * Reads a tool file as UTF-8.
 * @throws {SchemaError} `FILE_NOT_FOUND` naming `label` when it is missing, a directory or unreadable.
 */
export async function readToolFile(path: string, label: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'file not found'
        : code === 'EISDIR'
          ? 'is a directory, not a tool file'
          : `cannot read: ${(cause as Error).message}`;
    throw new SchemaError('FILE_NOT_FOUND', [{ file: label, path: '', message }], { cause });
  }
}
