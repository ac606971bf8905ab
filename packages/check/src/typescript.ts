import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';

// The compiler is 9 MB of CommonJS with no `type` in its package.json: an ESM `import` would make
// Node parse all of it once more to detect its module format, so it is required. Its types are
// imported from 'typescript' with `import type`.
/** The TypeScript compiler API. */
export const ts: typeof TypeScript = createRequire(import.meta.url)('typescript');
