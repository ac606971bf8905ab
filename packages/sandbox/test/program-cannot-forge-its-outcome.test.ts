// Regression: the program was compiled inside a textual wrapper, so code could close the wrapper's
// function early and run at the script's top level: it could end `failed` with an error of its
// choosing without failing, or declare `function __mci_run__` (hoisted over the bootstrap's) and end
// `success` without its code ever running. The status and the error of a run come only from the run.
import { describe, expect, it } from 'vitest';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1 });

const REFUSED = /^The code must be the body of a function and cannot close it/;

describe('a program that closes its function early', () => {
  it('cannot end failed with an error of its choosing', async () => {
    const code = [
      'output("x") });',
      'output("outside");',
      'Object.assign({ ok: false, error: { name: "ForgedError", message: "chosen", stack: "" } }, function () {',
    ].join('\n');
    for (const lang of ['js', 'ts'] as const) {
      const r = await run(pool, code, { lang });
      expect(r.status).toBe('failed');
      expect(r.error?.name).toBe('SyntaxError');
      expect(r.error?.message).toMatch(REFUSED);
      expect(r.outputs).toEqual([]);
    }
  });

  it('cannot end success without running, through a hoisted __mci_run__', async () => {
    const code = [
      '});',
      'function __mci_run__() { return { ok: true, sent: 0, task: 0 } }',
      '(async function () {',
      'throw new Error("the program itself fails")',
    ].join('\n');
    const r = await run(pool, code);
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(REFUSED);
  });

  it('cannot run at the top level before the deadline either', async () => {
    const r = await run(pool, '});\nwhile (true) {}\n(function () {', { timeoutMs: 5000 });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(REFUSED);
  });

  it('still gets its own syntax errors with their position, and braces in strings are fine', async () => {
    const bad = await run(pool, 'const a = 1;\nconst b = ;');
    expect(bad.error).toMatchObject({ name: 'SyntaxError', line: 2 });
    const fine = await run(pool, 'const s = "}); (function () {";\noutput(s + " }");\nreturn /\\}/.test(s)');
    expect(fine.status).toBe('success');
    expect(fine.outputs).toEqual(['}); (function () { }', true]);
  });
});
