// `pnpm check` (and the first half of `pnpm test`): the type check and the lint of the whole
// workspace, side by side. The Node-side sources are one TypeScript program (the root
// tsconfig.json), so each file is checked once; the browser code has its own settings.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

/** What Biome lints: the sources and tests each package's own `lint` script names. */
const LINTED = [
  'packages/agent/src',
  'packages/check/src',
  'packages/client/src',
  'packages/intent-extractor/src',
  'packages/protocol/src',
  'packages/sandbox/src',
  'packages/schema/src',
  'packages/tools/src',
  'apps/server/src',
  'apps/web/src',
  'apps/web/vite.config.ts',
  'apps/web/dev.ts',
  'examples/chat-client/src',
  'examples/demo-api/src',
  'test/e2e',
  'test/support/src',
  'test/web',
];

const STEPS: Record<string, readonly string[]> = {
  'typecheck (Node)': [bin('tsc'), '-p', 'tsconfig.json'],
  'typecheck (console)': [bin('tsc'), '-p', 'apps/web/tsconfig.json'],
  'typecheck (console tests)': [bin('tsc'), '-p', 'test/web/tsconfig.json'],
  lint: [bin('biome'), 'lint', ...LINTED],
};

const only = process.argv[2];
const chosen = Object.entries(STEPS).filter(([name]) => !only || name.startsWith(only));
if (chosen.length === 0) {
  console.error(`check: no step named ${only} (steps: typecheck, lint)`);
  process.exit(2);
}

/** Runs one step; its output is printed only when it fails, so a passing check stays quiet. */
const run = (name: string, [command, ...args]: readonly string[]) =>
  new Promise<boolean>((resolve) => {
    const child = spawn(command!, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code) => {
      if (code === 0) {
        console.info(`check: ${name} passed`);
        resolve(true);
      } else {
        console.error(`check: ${name} failed\n${Buffer.concat(output).toString('utf8')}`);
        resolve(false);
      }
    });
  });

const results = await Promise.all(chosen.map(([name, command]) => run(name, command)));
process.exitCode = results.every(Boolean) ? 0 : 1;
