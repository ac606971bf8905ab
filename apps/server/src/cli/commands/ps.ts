import type { ProcessFilter, ProcessSnapshot } from '@mci/client';
import { Option } from 'commander';
import { defineCommand } from '../command.ts';
import { numberOption } from '../options.ts';
import { formatAge, runDuration, toJsonText } from '../process-format.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote } from '../remote.ts';

interface PsOptions extends RemoteOptions {
  state?: ProcessFilter['state'];
  status?: ProcessFilter['status'];
  ref?: string;
  limit?: number;
  format: 'table' | 'json';
}

/**
 * `mci ps`: the processes of a running server, newest first (a table, or JSON): every one, read a
 * page at a time, or the newest `--limit N`.
 */
export default defineCommand<PsOptions>({
  configure(command) {
    command
      .addOption(
        new Option('--state <state>', 'only this state').choices([
          'queued',
          'running',
          'suspended',
          'terminating',
          'idle',
        ]),
      )
      .addOption(
        new Option('--status <status>', 'only this outcome').choices([
          'success',
          'failed',
          'timeout',
          'canceled',
        ]),
      )
      .option('--ref <ref>', 'only processes with this ref')
      .addOption(
        new Option('--limit <n>', 'only the newest n processes (default: all)').argParser(
          numberOption('--limit'),
        ),
      )
      .addOption(
        new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'),
      );
    addRemoteOptions(command);
  },
  run({ options }, io) {
    return runRemote('ps', options, io, async (client) => {
      const { limit } = options;
      const filter = {
        ...(options.state && { state: options.state }),
        ...(options.status && { status: options.status }),
        ...(options.ref !== undefined && { ref: options.ref }),
      };
      const processes: ProcessSnapshot[] = [];
      for await (const process of client.processes(filter, Math.min(limit ?? 100, 100))) {
        processes.push(process);
        if (processes.length === limit) break;
      }
      io.stdout.write(options.format === 'json' ? `${toJsonText(processes)}\n` : table(processes));
      return EXIT.OK;
    });
  },
});

const HEADERS = ['PID', 'STATE', 'STATUS', 'RUN', 'REF', 'AGE', 'DURATION'];

function table(processes: ProcessSnapshot[]): string {
  const now = Date.now();
  const rows = processes.map((p) => [
    String(p.pid),
    p.state,
    p.status ?? '-',
    String(p.run),
    p.ref ?? '-',
    formatAge(p.createdAt, now),
    runDuration(p, now),
  ]);
  const widths = HEADERS.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const render = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[render(HEADERS), ...rows.map(render)].join('\n')}\n`;
}
