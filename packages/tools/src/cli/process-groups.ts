/**
 * Child processes run as leaders of their own process group (`detached: true`), so a timeout or a
 * cancellation can kill the command together with everything it started. The live groups are also
 * killed when this process exits, because execa's own cleanup skips detached children.
 */
const live = new Set<number>();
let exitHookInstalled = false;

/** Remembers a live process group (its leader's pid). */
export function trackGroup(pid: number): void {
  live.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const group of live) killGroup(group);
    });
  }
}

/** Forgets a process group whose leader has exited. */
export function untrackGroup(pid: number): void {
  live.delete(pid);
}

/** Sends SIGKILL to every process of the group; a group that is already gone is not an error. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone already.
  }
}
