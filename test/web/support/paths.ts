import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** A path inside apps/web. */
export const webPath = (...parts: string[]): string => [`${repo}apps/web`, ...parts].join('/');

/** A path inside the repository. */
export const repoPath = (...parts: string[]): string => [repo.replace(/\/$/, ''), ...parts].join('/');

/** Where tests put their screenshots (gitignored). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../screenshots/', import.meta.url));
