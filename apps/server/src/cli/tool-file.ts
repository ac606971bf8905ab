import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** File names looked for in the working directory when no `--file` is given, in order. */
export const DEFAULT_TOOL_FILE_NAMES = ['mci.json', 'mci.yaml', 'mci.yml'] as const;

/**
 * The example tool file, the fallback for a newcomer: `dist/examples/mci.yaml` in the built package
 * (the build copies the repository's `examples/` there), else the repository's `examples/mci.yaml`
 * when `mci` runs from source.
 */
export const EXAMPLE_TOOL_FILE = [
  new URL('../examples/mci.yaml', import.meta.url),
  new URL('../../../../examples/mci.yaml', import.meta.url),
]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path)) as string;

/**
 * Picks the tool file a command works on: `--file` when given (resolved against `cwd`), else the
 * first of `mci.json`, `mci.yaml`, `mci.yml` in `cwd`, else {@link EXAMPLE_TOOL_FILE}.
 */
export function resolveToolFilePath(file: string | undefined, cwd: string): string {
  if (file) return resolve(cwd, file);
  for (const name of DEFAULT_TOOL_FILE_NAMES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  return EXAMPLE_TOOL_FILE;
}
