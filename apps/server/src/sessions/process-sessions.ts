import { decodeOutputValue, encodeOutputValue } from '@mci/protocol';
import type { StateHost } from '@mci/sandbox';
import type { Redactor } from '@mci/schema';
import type { ProcessSessions } from '../processes/process-manager-types.ts';
import type { StoredProcess } from '../processes/process-store.ts';
import { checkSessionId, newSessionId, processScope } from './session-id.ts';
import type { SessionStore } from './session-store.ts';

/**
 * The sessions of the process manager on a {@link SessionStore}: `open` checks and records a
 * process's session; `stateFor` is the `state` of a run, in its session's scope (or its own, `pid:N`,
 * without one). Values are stored in the output encoding of `@mci/protocol`, redacted like outputs.
 */
export function processSessions(store: SessionStore, redactor?: Redactor): ProcessSessions {
  return {
    async open(id, owner) {
      const session = id === true ? newSessionId() : checkSessionId(id);
      await store.open(session, owner);
      return session;
    },
    stateFor(record) {
      return stateHost(store, scopeOf(record), redactor);
    },
  };
}

/** The state scope of a process: its session, or its own without one. */
export function scopeOf(record: Pick<StoredProcess, 'pid' | 'session'>): string {
  return record.session ?? processScope(record.pid);
}

/** The `state` of one scope as the sandbox reaches it. */
export function stateHost(store: SessionStore, scope: string, redactor?: Redactor): StateHost {
  return {
    async get(key) {
      const entry = await store.read(scope, key);
      return entry && { value: decodeOutputValue(JSON.parse(entry.value)), version: entry.version };
    },
    set(key, value, options) {
      return store.write(scope, key, encodeStateValue(value, redactor), options);
    },
    delete: (key) => store.remove(scope, key),
    async keys(prefix) {
      return (await store.entries(scope, prefix)).map((entry) => entry.key);
    },
  };
}

/** A value as the `state` table keeps it: the output encoding's JSON text, redacted like outputs. */
export function encodeStateValue(value: unknown, redactor?: Redactor): string {
  const encoded = encodeOutputValue(value);
  return JSON.stringify(redactor ? redactor.redactValue(encoded) : encoded);
}
