import type { CommandEntry } from '../command.ts';

/**
 * The `mci` commands, in the order `mci --help` lists them.
 *
 * How to add one (`mci NAME`):
 * 1. Write `commands/NAME.ts`. Its default export is a `CommandModule` (see `../command.ts`), written
 *    with `defineCommand`: `configure` declares the arguments and options on the commander `Command`;
 *    `run` does the work with the parsed values and the injected `CliIo` (never `process.stdout`,
 *    `process.env` or `process.exitCode` directly) and resolves with the exit code. Import what the
 *    command needs (`@mci/sandbox`, the server, the MCP SDK) at the top of that file: it is loaded
 *    only when NAME runs, so `mci --help` and the other commands stay fast.
 * 2. Add one entry below: the name, the one-line description `mci --help` shows (lower case first,
 *    like every option's help), the lazy import.
 * Tests run it in-process: `mci([NAME, ...args], { cwd, env, input })` from the server's
 * `test/support/mci.ts`; `spawnMci` of `@mci/test-support` runs the real program.
 */
export const commands: readonly CommandEntry[] = [
  {
    name: 'validate',
    description: 'check a tool file, its toolsets and templates; print every problem found',
    load: () => import('./validate.ts'),
  },
  {
    name: 'list',
    description: 'list the tools of a tool file (disabled tools never appear)',
    load: () => import('./list.ts'),
  },
  {
    name: 'exec',
    description:
      'execute one tool and print its result as JSON (exit 0 ok, 1 tool error, 2 usage/load error)',
    load: () => import('./exec.ts'),
  },
  {
    name: 'run',
    description:
      'run a TypeScript snippet in the sandbox with the tools at hand (exit 0 on success, 1 otherwise)',
    load: () => import('./run.ts'),
  },
  {
    name: 'envs',
    description: 'list the environment variables the tools use, where, and whether each is set',
    load: () => import('./envs.ts'),
  },
  {
    name: 'extract',
    description: 'print the exec code blocks (intents) of a markdown file or of stdin',
    load: () => import('./extract.ts'),
  },
  {
    name: 'serve',
    description: 'run MCI Server: WebSocket (/ws), HTTP API, MCP (/mcp) and the web console on one port',
    load: () => import('./serve.ts'),
  },
  {
    name: 'mcp',
    description: 'serve run_code and the tools over MCP on stdin/stdout (logs on stderr)',
    load: () => import('./mcp.ts'),
  },
  {
    name: 'ps',
    description: 'list the processes of a running server, newest first',
    load: () => import('./ps.ts'),
  },
  {
    name: 'logs',
    description: "print a process's outputs and stdout/stderr (latest run unless --run)",
    load: () => import('./logs.ts'),
  },
  {
    name: 'kill',
    description: 'kill processes (queued ones at once, running ones within 100 ms)',
    load: () => import('./kill.ts'),
  },
  {
    name: 'approvals',
    description: 'list approvals that suspended processes wait for (pending ones by default)',
    load: () => import('./approvals.ts'),
  },
  {
    name: 'approve',
    description: 'approve pending approvals: their processes resume and the calls act',
    load: () => import('./approve.ts'),
  },
  {
    name: 'deny',
    description: 'deny pending approvals (--reason): the calls reject with APPROVAL_DENIED',
    load: () => import('./deny.ts'),
  },
  {
    name: 'sessions',
    description: 'list sessions, or show one with its processes and state keys',
    load: () => import('./sessions.ts'),
  },
  {
    name: 'state',
    description: "read, write or delete a session's state: state get|set|rm SESSION KEY [JSON]",
    load: () => import('./state.ts'),
  },
  {
    name: 'skill',
    description: 'save a process\'s code as a skill, list skills, delete one: skill save PID --name NAME | list | rm NAME',
    load: () => import('./skill.ts'),
  },
  {
    name: 'rerun',
    description: 'run idle processes again (a new run each; earlier runs stay readable)',
    load: () => import('./rerun.ts'),
  },
  {
    name: 'submit',
    description: 'run a TypeScript/JavaScript file on a running server; prints the pid',
    load: () => import('./submit.ts'),
  },
  {
    name: 'chat',
    description: 'chat with a model whose code runs on the server (one prompt, or a REPL without one)',
    load: () => import('./chat.ts'),
  },
];
