import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** File-name endings of toolset files, in lookup order. */
export const TOOLSET_FILE_EXTENSIONS = ['.mci.json', '.mci.yaml', '.mci.yml'] as const;

/** Where a toolset was found, or every place that was tried. */
export type ToolsetLocation =
  | { found: true; files: string[] }
  | { found: false; tried: string[]; reason: string };

async function kindOf(path: string): Promise<'file' | 'directory' | undefined> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) return 'directory';
    return info.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds toolset `name` in `libraryDir`: first a directory `{libraryDir}/{name}/` (all its
 * `*.mci.json`, `*.mci.yaml`, `*.mci.yml` files, sorted by name), then the file `{libraryDir}/{name}`,
 * then `{name}.mci.json`, `{name}.mci.yaml`, `{name}.mci.yml`.
 * @see MCI schema reference, "Toolset Name Resolution"
 */
export async function locateToolset(libraryDir: string, name: string): Promise<ToolsetLocation> {
  const base = join(libraryDir, name);
  const tried = [`${base}/ (directory)`];
  if ((await kindOf(base)) === 'directory') {
    const entries = await readdir(base, { withFileTypes: true });
    const names = entries
      .filter((entry) => TOOLSET_FILE_EXTENSIONS.some((ext) => entry.name.endsWith(ext)))
      .map((entry) => entry.name)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const files: string[] = [];
    for (const file of names) if ((await kindOf(join(base, file))) === 'file') files.push(join(base, file));
    if (files.length > 0) return { found: true, files };
    return {
      found: false,
      tried,
      reason: `directory ${base} holds no ${TOOLSET_FILE_EXTENSIONS.map((ext) => `*${ext}`).join(', ')} files`,
    };
  }
  for (const candidate of [base, ...TOOLSET_FILE_EXTENSIONS.map((ext) => base + ext)]) {
    tried.push(candidate);
    if ((await kindOf(candidate)) === 'file') return { found: true, files: [candidate] };
  }
  return { found: false, tried, reason: `toolset "${name}" not found; tried ${tried.join(', ')}` };
}
