import type { LiveProcess } from './live-process.ts';

/**
 * Drains the live processes at shutdown: cancels the queued ones at once, lets the others finish for
 * `graceMs` (milliseconds), kills those still live, and resolves once every one of them is idle.
 * `live` is the manager's map of live processes, which shrinks as they become idle.
 */
export async function drainLive(
  live: ReadonlyMap<number, LiveProcess>,
  kill: (live: LiveProcess) => void,
  graceMs: number,
): Promise<void> {
  for (const process of [...live.values()]) if (process.record.state === 'queued') kill(process);
  const allIdle = () =>
    Promise.all([...live.values()].map((process) => new Promise<void>((r) => process.waiters.push(r))));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([allIdle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  for (const process of [...live.values()]) kill(process);
  await allIdle();
}
