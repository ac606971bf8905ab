import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mci } from '../../test/support/mci.ts';
import { commands } from './commands/index.ts';

// What every `mci` command shares: usage errors exit 2, one spelling of each flag, one style of help.

let empty: string;
beforeAll(async () => {
  empty = await mkdtemp(join(tmpdir(), 'mci-usage-'));
});
afterAll(async () => {
  await rm(empty, { recursive: true, force: true });
});

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Help text starts in lower case, unless its first word is an acronym (`URL`, `MCP`). */
const lowerCaseFirst = /^(?:[^A-Z]|[A-Z]{2,}\b)/;

/** `[short, long, description]` of each option line of `mci NAME --help`. */
function optionsOf(help: string): Array<{ short?: string; long: string; description: string }> {
  const section = help.split('\nOptions:\n')[1]?.split('\n\n')[0] ?? '';
  const options: Array<{ short?: string; long: string; description: string }> = [];
  for (const line of section.split('\n')) {
    const match = /^ {2}(?:(-\w), )?(--[\w-]+)\S*(?: <[^>]+>| \[[^\]]+\])? {2,}(.*)$/.exec(line);
    if (match)
      options.push({ ...(match[1] && { short: match[1] }), long: match[2]!, description: match[3]! });
  }
  return options;
}

describe('mci usage errors', () => {
  it.each(commands.map((entry) => entry.name))('mci %s --no-such-option exits 2', async (name) => {
    const run = await mci([name, '--no-such-option'], { cwd: empty, input: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--no-such-option'");
  });

  it('an unknown command exits 2 and says which', async () => {
    const run = await mci(['nope'], { cwd: empty });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command 'nope'");
  });

  it('a bad option value exits 2 in the tool-file commands too', async () => {
    for (const args of [
      ['validate', '-e', 'NOEQUALS'],
      ['list', '--format', 'xml'],
      ['run', 'output(1)', '--timeout', 'soon'],
      ['run', 'output(1)', '--lang', 'python'],
      ['mcp', '--log-level', 'loud'],
      ['serve', '--log-level', 'loud'],
    ]) {
      const run = await mci(args, { cwd: empty, input: '' });
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
    }
  });
});

describe('mci --version', () => {
  it('prints the version of the server package', async () => {
    for (const flag of ['--version', '-V']) {
      const run = await mci([flag], { cwd: empty });
      expect(run).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('mci --help', () => {
  it('describes every command in lower case first, as commander describes help', async () => {
    const run = await mci(['--help'], { cwd: empty });
    expect(run.code).toBe(0);
    for (const entry of commands) {
      expect(run.stdout).toContain(`  ${entry.name} `);
      expect(entry.description, entry.name).toMatch(lowerCaseFirst);
    }
  });

  it('spells each flag one way across commands, with help in lower case first', async () => {
    const shortOf = new Map<string, { short: string | undefined; command: string }>();
    for (const { name } of commands) {
      const run = await mci([name, '--help'], { cwd: empty });
      expect(run.code).toBe(0);
      const options = optionsOf(run.stdout);
      expect(options.length, name).toBeGreaterThan(0);
      for (const option of options) {
        expect({ command: name, option: option.long, description: option.description }).toEqual({
          command: name,
          option: option.long,
          description: expect.stringMatching(lowerCaseFirst),
        });
        const seen = shortOf.get(option.long);
        if (seen === undefined) shortOf.set(option.long, { short: option.short, command: name });
        else
          expect({ option: option.long, short: option.short, in: name }).toEqual({
            option: option.long,
            short: seen.short,
            in: name,
          });
      }
    }
    // The flags a user carries from one command to the next.
    expect(shortOf.get('--timeout')?.short).toBe('-t');
    expect(shortOf.get('--wait')?.short).toBe('-w');
    expect(shortOf.get('--file')?.short).toBe('-f');
    expect(shortOf.get('--log-level')).toBeDefined();
  });
});
