// The options of `pnpm soak` (scripts/soak.ts).
import { parseArgs } from 'node:util';
import { PROGRAMS } from './programs.ts';

const USAGE = `pnpm soak [options]: hostile programs against a real mci serve; exits 1 when a check fails
  --processes N       processes to create (default 2400)
  --connections N     client connections, each its own principal (default 4)
  --in-flight N       programs each connection keeps in flight (default 4)
  --seconds S         stop creating after S seconds (default: after --processes)
  --idle-seconds S    wait after the load before the memory checks (default 60)
  --concurrency N     sandbox workers of the server (default 2)
  --port P            the server's port (default 0: any free one)
  --json FILE         write the report as JSON
  --only NAME,NAME    only these programs (${PROGRAMS.map((p) => p.name).join(', ')})
  --server-log FILE   keep the server's log lines (JSON, debug level)
  --abusive           one more client (a valid token) tries every abuse of docs/server.md's
                      "Limits and abuse" at once, with the server's default request budget
  --abuse-seconds S   how long it keeps what it took (default 40)
  --help              this text
`;

/** The soak's options; `--help` prints the usage and exits 0, a bad option exits 2 with it. */
export function soakFlags() {
  let parsed: ReturnType<typeof parseSoakArgs>;
  try {
    parsed = parseSoakArgs();
  } catch (error) {
    process.stderr.write(`pnpm soak: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  return parsed.values;
}

function parseSoakArgs() {
  return parseArgs({
    options: {
      help: { type: 'boolean', default: false },
      abusive: { type: 'boolean', default: false },
      'abuse-seconds': { type: 'string', default: '40' },
      port: { type: 'string', default: '0' },
      processes: { type: 'string', default: '2400' },
      connections: { type: 'string', default: '4' },
      'in-flight': { type: 'string', default: '4' },
      seconds: { type: 'string' },
      'idle-seconds': { type: 'string', default: '60' },
      concurrency: { type: 'string', default: '2' },
      json: { type: 'string' },
      only: { type: 'string' },
      'server-log': { type: 'string' },
    },
  });
}
