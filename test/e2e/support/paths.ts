import { fileURLToPath } from 'node:url';

/** Absolute path of the repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of a file under `examples/`. */
export const examplePath = (...parts: string[]) =>
  fileURLToPath(new URL(`../../../examples/${parts.join('/')}`, import.meta.url));
