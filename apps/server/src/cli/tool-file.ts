import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** File names looked for in the working directory when no `--file` is given, in order. */
export const DEFAULT_TOOL_FILE_NAMES = ['mci.json', 'mci.yaml', 'mci.yml'] as const;

/** The example tool file shipped in `examples/`, the fallback for a newcomer. */
export const EXAMPLE_TOOL_FILE = fileURLToPath(new URL('../../../../examples/mci.yaml', import.meta.url));

/**
 * Picks the tool file a command works on: `--file` when given (resolved against `cwd`), else the
 * first of `mci.json`, `mci.yaml`, `mci.yml` in `cwd`, else the example file in `examples/`.
 */
export function resolveToolFilePath(file: string | undefined, cwd = process.cwd()): string {
  if (file) return resolve(cwd, file);
  for (const name of DEFAULT_TOOL_FILE_NAMES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  return EXAMPLE_TOOL_FILE;
}
