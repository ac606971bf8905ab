import { ClientError } from '@mci/client';
import { encodeOutputValue } from '@mci/protocol';
import { useEffect, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/** What {@link useStateValue} returns. */
export interface StateValueView {
  /** The value in the output encoding (docs/protocol.md, "Output values"); undefined until read. */
  encoded: { value: unknown } | undefined;
  /** Why it could not be read (`NOT_FOUND`: deleted or expired since the key was listed). */
  error: string | undefined;
}

/**
 * The value of state entry `key` of `session` (`state.get`), read when `enabled` and again whenever
 * `version` changes. The client decodes values (a `Map` reads as a `Map`); the console shows them
 * in the output encoding, as it shows outputs, so the value is encoded again (exactly: decoding
 * reverses the encoding).
 */
export function useStateValue(
  session: string,
  key: string,
  version: number,
  enabled: boolean,
): StateValueView {
  const client = useClient();
  const [view, setView] = useState<StateValueView>({
    encoded: undefined,
    error: undefined,
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new version is read again
  useEffect(() => {
    if (!enabled) return;
    let active = true;
    client.sessions.getState(session, key).then(
      (entry) =>
        active &&
        setView({
          encoded: { value: encodeOutputValue(entry.value) },
          error: undefined,
        }),
      (caught: Error) =>
        active &&
        setView({
          encoded: undefined,
          error:
            caught instanceof ClientError && caught.code === 'NOT_FOUND'
              ? 'Gone (deleted or expired).'
              : caught.message,
        }),
    );
    return () => {
      active = false;
    };
  }, [client, session, key, version, enabled]);
  return { encoded: view.encoded, error: view.error };
}
