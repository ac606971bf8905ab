import { openTestSocket, type TestSocket } from '@mci/test-support';

/** A server message as the tests read it. */
// biome-ignore lint/suspicious/noExplicitAny: tests read server messages field by field.
export type Json = Record<string, any>;

/**
 * The shared {@link TestSocket} with untyped messages, opened on `wsUrl` (with a bearer `token`) and
 * resolved once the server's `hello` arrived.
 */
export function openJsonSocket(wsUrl: string, token?: string): Promise<TestSocket<Json>> {
  return openTestSocket<Json>(wsUrl, token === undefined ? {} : { token });
}
