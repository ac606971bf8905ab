import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DeadlineTimer, RequestDeadline } from './request-deadline.ts';

describe('DeadlineTimer', () => {
  it('expires each deadline when its own time is up, never before, and not once disposed', async () => {
    const timer = new DeadlineTimer();
    const started = performance.now();
    const expired: number[] = [];
    let last: () => void = () => {};
    const allExpired = new Promise<void>((resolve) => {
      last = resolve;
    });
    const watch = (timeoutMs: number) => {
      const deadline = new RequestDeadline(undefined, timeoutMs, timer, started);
      // What undici's dispatch would be ended by.
      deadline.track({
        abort(reason) {
          expect(deadline.timedOut).toBe(true);
          expect(reason).toEqual(new Error('timed out'));
          expect(performance.now()).toBeGreaterThanOrEqual(started + timeoutMs);
          expired.push(timeoutMs);
          if (expired.length === 3) last();
        },
      });
      return deadline;
    };
    const deadlines = [watch(90), watch(30), watch(60)];
    const disposed = watch(45);
    disposed.dispose();
    await allExpired;
    expect(expired).toEqual([30, 60, 90]);
    expect(() => deadlines[1]!.throwIfAborted()).toThrow('timed out');
    disposed.throwIfAborted();
    timer.close();
  });

  it('follows a caller signal and lets go of it on dispose', () => {
    const timer = new DeadlineTimer();
    const caller = new AbortController();
    const done = new RequestDeadline(caller.signal, 60_000, timer);
    const live = new RequestDeadline(caller.signal, 60_000, timer);
    const ended: unknown[] = [];
    live.track({ abort: (reason) => ended.push(reason) });
    done.dispose();
    caller.abort();
    expect(ended).toEqual([new Error('aborted')]);
    expect(() => live.throwIfAborted()).toThrow('aborted');
    // A dispatch that starts after the abort is ended at once.
    live.track({ abort: (reason) => ended.push(reason) });
    expect(ended).toHaveLength(2);
    expect(live.timedOut).toBe(false);
    done.throwIfAborted();
    live.dispose();
    timer.close();
  });

  it('does not keep the process alive once its requests are done', async () => {
    // A child process that starts and finishes a request with a 10-minute timeout must exit at once.
    const module = new URL('./request-deadline.ts', import.meta.url).href;
    const script = `
      const { DeadlineTimer, RequestDeadline } = await import(${JSON.stringify(module)});
      const deadline = new RequestDeadline(undefined, 600000, new DeadlineTimer());
      await new Promise((resolve) => setTimeout(resolve, 20));
      deadline.dispose();`;
    const started = performance.now();
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
