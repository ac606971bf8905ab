import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ToolFileInput } from '@mci/schema';
import {
  createToolRunner,
  loadTools,
  type LoadToolsOptions,
  type ToolRunner,
  type ToolRunnerOptions,
} from '../../src/index.ts';

/** A temporary directory holding a tool file; removed on dispose. */
export interface ToolDir extends AsyncDisposable {
  /** Real path of the directory. */
  dir: string;
  /** The main tool file (`mci.json`). */
  file: string;
  /** Writes a file relative to `dir` (creating directories) and returns its absolute path. */
  write(path: string, contents: string): Promise<string>;
}

/** Creates a temporary directory with `mci.json` holding `toolFile`. */
export async function toolDir(toolFile: ToolFileInput | Record<string, unknown>): Promise<ToolDir> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'mci-tools-')));
  const write = async (path: string, contents: string) => {
    const absolute = join(dir, path);
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, contents);
    return absolute;
  };
  const file = await write('mci.json', JSON.stringify({ schemaVersion: '1.0', ...toolFile }, null, 2));
  return {
    dir,
    file,
    write,
    async [Symbol.asyncDispose]() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A runner over a temporary tool file: both are cleaned up on dispose. */
export interface TestRunner extends AsyncDisposable {
  runner: ToolRunner;
  dir: string;
  file: string;
}

/** Writes `tools` into a temporary tool file, loads it and creates a runner. */
export async function runnerFor(
  toolFile: Record<string, unknown>,
  options: ToolRunnerOptions & { load?: LoadToolsOptions } = {},
): Promise<TestRunner> {
  const temp = await toolDir(toolFile);
  const runner = createToolRunner(await loadTools(temp.file, options.load), options);
  return {
    runner,
    dir: temp.dir,
    file: temp.file,
    async [Symbol.asyncDispose]() {
      await runner.close();
      await temp[Symbol.asyncDispose]();
    },
  };
}

/** {@link runnerFor} a tool file holding the one tool `tool`. */
export function runnerForTool(
  tool: Record<string, unknown>,
  options: ToolRunnerOptions & { load?: LoadToolsOptions } = {},
): Promise<TestRunner> {
  return runnerFor({ tools: [tool] }, options);
}
