import { execFileSync } from 'node:child_process';

/**
 * Whether util-linux `script` is on PATH: the tests that need a real terminal run a program under
 * it (`script -qec CMD /dev/null`) and are skipped where it is missing.
 */
export const hasScript: boolean = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
