#!/usr/bin/env node
// The `mci` executable. In a built or installed package it runs the compiled command line in dist/;
// in a checkout that was not built it runs the TypeScript source (Node strips the types), resolving
// the workspace packages to their sources through the `@mci/source` export condition.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';

const dist = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: [...context.conditions, '@mci/source'] }),
  });
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
