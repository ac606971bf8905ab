import { randomUUID } from 'node:crypto';
import { stateKeyProblem } from '@mci/sandbox';
import { ServerError } from '../processes/server-error.ts';

/**
 * A session id a client may choose: 1 to 128 letters, digits, `_`, `-` and `.`, starting with a
 * letter or digit. No `:`, so it never names the state of a process without a session (`pid:N`).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** A new session id made by the server (a UUID). */
export function newSessionId(): string {
  return randomUUID();
}

/**
 * Checks a session id given by a client.
 * @throws ServerError `VALIDATION` (path `session`) when it does not match {@link SESSION_ID_PATTERN}.
 */
export function checkSessionId(id: unknown, path = 'session'): string {
  if (typeof id !== 'string' || !SESSION_ID_PATTERN.test(id))
    throw new ServerError(
      'VALIDATION',
      `${path} must be 1 to 128 letters, digits, "_", "-" or ".", starting with a letter or digit`,
      { path },
    );
  return id;
}

/**
 * Checks a state key given over HTTP or WebSocket (the sandbox's rule, `stateKeyProblem`).
 * @throws ServerError `VALIDATION` (path `key`).
 */
export function checkStateKey(key: unknown): string {
  const problem = stateKeyProblem(key);
  if (problem) throw new ServerError('VALIDATION', problem, { path: 'key' });
  return key as string;
}

/** The state scope of a process without a session. */
export function processScope(pid: number): string {
  return `pid:${pid}`;
}
