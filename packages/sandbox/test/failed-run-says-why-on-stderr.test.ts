// Regression: a run that threw, had a syntax error, called an unknown tool, timed out or was killed
// left stderr empty; the reason lived only in the structured `error`, which simple clients never
// read. Now the last stderr event says why, the way Node prints an uncaught error.
import { describe, expect, it } from 'vitest';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1 });

describe('the stderr of a run that did not succeed', () => {
  it('ends with the uncaught error and its position, as Node prints it', async () => {
    const r = await run(pool, 'console.error("before");\nthrow new Error("boom")');
    expect(r.status).toBe('failed');
    expect(r.stderr).toBe('before\nError: boom\n    at snippet.ts:2:7\n');
    expect(r.error).toMatchObject({ name: 'Error', message: 'boom', line: 2, column: 7 });
    expect(r.events.at(-1)).toMatchObject({
      type: 'log',
      stream: 'stderr',
      text: 'Error: boom\n    at snippet.ts:2:7\n',
    });
  });

  it('names a syntax error and an unknown tool with their positions', async () => {
    const syntax = await run(pool, 'const a = 1;\nconst b = ;', { lang: 'js' });
    expect(syntax.stderr).toMatch(/^SyntaxError: Unexpected token ';'\n {4}at snippet\.js:2:11\n$/);
    const tool = await run(pool, 'output(1);\nawait tools.nope()');
    expect(tool.stderr).toMatch(
      /^TypeError: Unknown tool "nope"\. This execution has no tools\.\n {4}at .*snippet\.ts:2:/,
    );
    expect(tool.outputs).toEqual([1]);
  });

  it('says timeout and canceled in one short line', async () => {
    const timeout = await run(pool, 'while (true) {}', { timeoutMs: 300 });
    expect(timeout.stderr).toBe('timeout: the run exceeded 300 ms\n');
    const execution = pool.execute({
      code: 'output(0);\nawait new Promise(() => {})',
      onEvent: () => execution.kill(),
    });
    const killed = await execution.result;
    expect(killed.status).toBe('canceled');
    expect(killed.stderr).toBe('canceled: killed by a signal\n');
  });

  it('stays as the program wrote it when the run succeeds', async () => {
    const r = await run(pool, 'console.warn("careful");\nreturn 1');
    expect(r.stderr).toBe('careful\n');
  });
});
