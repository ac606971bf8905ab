import { describe, expect, it } from 'vitest';
import type { SkillHost } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1 });

/** Skill bodies as the server makes them: a function of `exports` that sets `exports.default`. */
const DOUBLE = `"use strict";\nexports.default = async (input) => input.n * 2;`;
const LOADS = `globalThis.__loads = (globalThis.__loads ?? 0) + 1;\nexports.default = async () => globalThis.__loads;`;

function host(overrides: Partial<SkillHost> = {}): SkillHost & { saved: unknown[] } {
  const saved: unknown[] = [];
  return {
    sources: { double: DOUBLE, loads: LOADS, broken: 'exports.default = 42;' },
    checkInput(name, input) {
      if (name === 'double' && typeof (input as { n?: unknown })?.n !== 'number')
        throw Object.assign(new TypeError('Invalid input: input.n must be number'), { code: 'VALIDATION' });
    },
    async save(skill) {
      saved.push(skill);
      return { name: (skill as { name: string }).name, version: 1 };
    },
    saved,
    ...overrides,
  };
}

describe('skills inside the sandbox', () => {
  it('runs a skill in the calling run, its module loaded once', async () => {
    const r = await run(
      pool,
      'const a = await skills.double({ n: 21 });\nawait skills.loads();\nreturn [a, await skills.loads(), Object.keys(skills)];',
      { skills: host() },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([[42, 1, ['double', 'loads', 'broken']]]);
  });

  it('rejects an input the host refuses, with its message and code, before the skill runs', async () => {
    const r = await run(
      pool,
      `try { await skills.double({ n: 'x' }); } catch (e) { return [e.name, e.message, e.code]; }`,
      { skills: host() },
    );
    expect(r.outputs).toEqual([['TypeError', 'Invalid input: input.n must be number', 'VALIDATION']]);
  });

  it('names the saved skills for an unknown one, and says when a module exports no function', async () => {
    const unknown = await run(pool, 'await skills.doubel({ n: 1 });', { skills: host() });
    expect(unknown.error?.message).toBe(
      'Unknown skill "doubel". Did you mean skills.double? Saved skills: double, loads, broken.',
    );
    const broken = await run(pool, 'await skills.broken();', { skills: host() });
    expect(broken.error?.message).toMatch(/skills\.broken: its module did not export a function/);
  });

  it('keeps a skill inside its function: a body that closes it is a SyntaxError of that call', async () => {
    const r = await run(
      pool,
      `try { await skills.escape(); } catch (e) { return [e.name, typeof globalThis.escaped]; }`,
      {
        skills: host({
          sources: { escape: '}); globalThis.escaped = true; (function () {' },
        }),
      },
    );
    expect(r.outputs).toEqual([['SyntaxError', 'undefined']]);
  });

  it('answers skills.save from the host', async () => {
    const skills = host();
    const r = await run(
      pool,
      `return await skills.save({ name: 'triple', description: 'x3', code: 'export default async () => 3;' });`,
      { skills },
    );
    expect(r.outputs).toEqual([{ name: 'triple', version: 1 }]);
    expect(skills.saved).toEqual([
      { name: 'triple', description: 'x3', code: 'export default async () => 3;' },
    ]);
  });

  it('has no skills global without a skill host', async () => {
    const r = await run(pool, 'return typeof skills;');
    expect(r.outputs).toEqual(['undefined']);
  });
});
