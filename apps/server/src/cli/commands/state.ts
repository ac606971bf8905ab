import { decodeOutputValue, encodeOutputValue } from '@mci/protocol';
import { defineCommand } from '../command.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote, UsageError } from '../remote.ts';

interface StateOptions extends RemoteOptions {
  ttl?: string;
  ifVersion?: string;
}

const positive = (name: string, text: string | undefined, minimum: number) => {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < minimum)
    throw new UsageError(`${name} must be an integer >= ${minimum}, got ${JSON.stringify(text)}`);
  return value;
};

/**
 * `mci state get|set|rm SESSION KEY [JSON]`: reads (prints the value as JSON in the output encoding),
 * writes (`--ttl MS`, `--if-version N`; prints the new version) or deletes one state entry of a
 * session (docs/sessions.md). `get` of a missing key and a stale `--if-version` exit 1.
 */
export default defineCommand<
  StateOptions,
  [action: string, session: string, key: string, value: string | undefined]
>({
  configure(command) {
    command
      .argument('<action>', 'get, set or rm')
      .argument('<session>', 'the session id')
      .argument('<key>', 'the state key')
      .argument('[json]', 'set: the value, as JSON (the output encoding: {"$type":"bigint","value":"1"})')
      .option('--ttl <ms>', 'set: expire the entry after this many ms')
      .option('--if-version <n>', 'set: write only if the key is at this version (0: absent)');
    addRemoteOptions(command);
  },
  run({ args: [action, session, key, json], options }, io) {
    return runRemote('state', options, io, async (client) => {
      if (action === 'get') {
        const entry = await client.sessions.getState(session, key);
        io.stdout.write(`${JSON.stringify(encodeOutputValue(entry.value))}\n`);
        return EXIT.OK;
      }
      if (action === 'rm') {
        const deleted = await client.sessions.deleteState(session, key);
        io.stderr.write(deleted ? `deleted ${key}\n` : `no ${key} in session ${session}\n`);
        return EXIT.OK;
      }
      if (action !== 'set')
        throw new UsageError(`action must be get, set or rm, got ${JSON.stringify(action)}`);
      if (json === undefined) throw new UsageError('mci state set SESSION KEY JSON: the value is missing');
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch {
        throw new UsageError(`the value must be JSON, got ${JSON.stringify(json)}`);
      }
      const ttlMs = positive('--ttl', options.ttl, 1);
      const ifVersion = positive('--if-version', options.ifVersion, 0);
      const version = await client.sessions.setState(session, key, decodeOutputValue(value), {
        ...(ttlMs !== undefined && { ttlMs }),
        ...(ifVersion !== undefined && { ifVersion }),
      });
      io.stdout.write(`${version}\n`);
      return EXIT.OK;
    });
  },
});
