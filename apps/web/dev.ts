// `pnpm dev` for the console: vite's dev server, closed on Ctrl-C or SIGTERM with exit code 0, so
// pnpm and turbo report a clean stop (the vite command dies of the signal, which they print as a
// failure).
import { createServer } from 'vite';

const server = await createServer();
await server.listen();
server.printUrls();
let stopping: Promise<void> | undefined;
// One Ctrl-C arrives more than once (from the terminal and forwarded by pnpm): close once.
const stop = () => {
  stopping ??= server.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
