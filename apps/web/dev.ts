// `pnpm dev` for the console: vite's dev server, closed on Ctrl-C or SIGTERM with exit code 0, so
// pnpm and turbo report a clean stop (the vite command dies of the signal, which they print as a
// failure).
import { createServer, type ViteDevServer } from 'vite';

let server: ViteDevServer | undefined;
let stopping = false;
// One Ctrl-C arrives more than once (from the terminal and forwarded by pnpm): close once. The
// listeners come first, so a Ctrl-C while vite is still starting (its first start optimises the
// dependencies, which takes seconds) stops it cleanly too.
const stop = () => {
  if (stopping) return;
  stopping = true;
  void (server?.close() ?? Promise.resolve()).then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

server = await createServer();
await server.listen();
server.printUrls();
