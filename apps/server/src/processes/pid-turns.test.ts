import { describe, expect, it } from 'vitest';
import { PidTurns } from './pid-turns.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PidTurns', () => {
  it('runs the work of one pid one piece after another, a failed piece included', async () => {
    const turns = new PidTurns();
    const log: string[] = [];
    const piece = (name: string, fail = false) =>
      turns.run(1, async () => {
        log.push(`${name} start`);
        await tick();
        log.push(`${name} end`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([piece('a', true), piece('b'), piece('c')]);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
  });

  it('runs the work of different pids side by side', async () => {
    const turns = new PidTurns();
    const log: string[] = [];
    const piece = (pid: number) =>
      turns.run(pid, async () => {
        log.push(`${pid} start`);
        await tick();
        log.push(`${pid} end`);
      });
    await Promise.all([piece(1), piece(2)]);
    expect(log).toEqual(['1 start', '2 start', '1 end', '2 end']);
  });
});
