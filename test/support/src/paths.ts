import { fileURLToPath } from 'node:url';

// The one place that knows where this package sits in the repository.

/** Absolute path of the repository root, with a trailing slash. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of a file under the repository's `examples/`. */
export const examplePath = (...parts: string[]): string =>
  fileURLToPath(new URL(`../../../examples/${parts.join('/')}`, import.meta.url));
