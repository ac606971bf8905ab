import { bootstrap } from './bootstrap.ts';
import { createCloner } from './clone.ts';
import { installFetch } from './fetch.ts';
import { createInspectCopier } from './inspect-copy.ts';
import { capturePrimordials } from './primordials.ts';
import { createToolsAndSkills } from './tools-and-skills.ts';
import { createUrlApis, URL_PARTS } from './url.ts';
import { installWebApis } from './web-apis.ts';

/**
 * The bootstrap script's source text: one function expression `(send, call) => control` built from
 * the bootstrap parts' own source (`Function.prototype.toString`), so the isolate code is type-checked
 * and linted with the rest of the package. Compiled once per worker, then reused through V8's code
 * cache for each new isolate.
 *
 * The parts every isolate runs are parenthesized, which makes V8 compile them eagerly (its PIFE
 * heuristic), so their bytecode is in the cache. The parts built on first use (URL and the other web
 * APIs, fetch) are not: the cache then holds only their lazy function records, and a program that
 * uses them compiles them then: most programs never use them, and one that does pays the compile,
 * a fraction of a millisecond (figures in docs/notes/sandbox-performance.md).
 */
export function bootstrapSource(): string {
  return `(function (send, call) {
'use strict';
const lib = {
  capturePrimordials: (${capturePrimordials}),
  createCloner: (${createCloner}),
  createInspectCopier: (${createInspectCopier}),
  createToolsAndSkills: (${createToolsAndSkills}),
  createUrlApis: ${createUrlApis},
  urlParts: ${JSON.stringify(URL_PARTS)},
  installWebApis: ${installWebApis},
  installFetch: ${installFetch},
};
return (${bootstrap})(send, call, lib);
})`;
}
