import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { imagesIn } from '@mci/protocol';
import type { ExecutionResult } from '@mci/sandbox';

/** File name extensions of common picture types (others get `.bin`). */
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
};

/**
 * Writes the files of `result` (`output.file()`, under their own names, which the sandbox checked)
 * and its pictures (`image-1.png`, `image-2.jpg`, ... in output order) to directory `dir`, made if
 * missing, and returns the paths written. A picture whose name a file took gets a `-2` suffix.
 * @throws the file system's error when `dir` cannot be made or written.
 */
export async function saveRunFiles(dir: string, result: ExecutionResult): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const taken = new Set<string>();
  const written: string[] = [];
  const save = async (name: string, data: Uint8Array) => {
    let unique = name;
    for (let n = 2; taken.has(unique); n++) unique = name.replace(/(\.[^.]*)?$/, `-${n}$1`);
    taken.add(unique);
    const path = join(dir, unique);
    await writeFile(path, data);
    written.push(path);
  };
  for (const file of result.files ?? []) await save(file.name, file.data);
  const images = imagesIn(result.outputs);
  for (const [i, image] of images.entries())
    await save(
      `image-${i + 1}.${EXTENSIONS[image.mimeType.toLowerCase()] ?? 'bin'}`,
      Buffer.from(image.data, 'base64'),
    );
  return written;
}
