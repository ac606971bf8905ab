// Loaded with `node --import` by `modulesLoadedBy`: appends the URL of every module the program loads
// to the file named by MCI_TRACE_IMPORTS, one per line.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.MCI_TRACE_IMPORTS;
if (out) {
  registerHooks({
    load(url, context, next) {
      appendFileSync(out, `${url}\n`);
      return next(url, context);
    },
  });
}
