import { connect, type MciClient } from '@mci/client';
import { createServer, type MciServer, type ServerOptions } from '@mci/server';
import { repoPath } from './paths.ts';

/** Starts a real server on 127.0.0.1, port 0, with the example tools and silent logs. */
export function startServer(options: Partial<ServerOptions> = {}): Promise<MciServer> {
  return createServer({
    host: '127.0.0.1',
    port: 0,
    file: repoPath('examples', 'mci.yaml'),
    concurrency: 2,
    logLevel: 'silent',
    ...options,
  });
}

/** A `@mci/client` of the test itself (the "other client" the pages watch). */
export async function testClient(server: MciServer, token?: string): Promise<MciClient & AsyncDisposable> {
  return (await connect(server.url, token === undefined ? {} : { token })) as MciClient & AsyncDisposable;
}

/** Server options for a chat whose one model replays the transcript `file` at `tokensPerSecond`. */
export function replayChat(file: string, tokensPerSecond: number): Partial<ServerOptions> {
  return { chat: { models: [`replay:${file}`], modelOptions: { tokensPerSecond } } };
}
