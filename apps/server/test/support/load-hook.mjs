// `node --import` this file to hear which OpenTelemetry SDK modules a process loads: each is named
// on stderr as `[load-hook] loaded SPECIFIER` (the API is not named: the code always loads it).
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('@opentelemetry/') && specifier !== '@opentelemetry/api')
      process.stderr.write(`[load-hook] loaded ${specifier}\n`);
    return next(specifier, context);
  },
});
