// The `mci` command line as a library (`@mci/server/cli`): run a command in-process with injected
// streams, environment and signals.

// Types
export type { CliIo, InputStream, OutputStream, SignalSource } from './io.ts';
// Running commands
export { processIo } from './io.ts';
export { runMci } from './program.ts';
