import type { MciClient } from '@mci/client';
import type { MciServer, ServerOptions } from '@mci/server';
import { launchBrowser } from '@mci/test-support';
import type { BrowserContext, Page } from 'playwright-core';
import { openPage } from './browser.ts';
import { startServer, testClient } from './start-server.ts';

/** What {@link openConsole} gives a test; disposing it closes the browser, the client and the server. */
export interface ConsoleSession extends AsyncDisposable {
  server: MciServer;
  /** The test's own `@mci/client` on `server` (the "other client" the page watches). */
  client: MciClient;
  context: BrowserContext;
  /** A fresh page in Chromium, not yet navigated. */
  page: Page;
}

/**
 * The start of a console test: a real server ({@link startServer} with `options`), a test client on
 * it (with `token`), Chromium and a fresh page ({@link openPage}).
 */
export async function openConsole(
  options: Partial<ServerOptions> = {},
  token?: string,
): Promise<ConsoleSession> {
  const server = await startServer(options);
  const opened: AsyncDisposable[] = [server];
  const close = async () => {
    for (const resource of opened.reverse()) await resource[Symbol.asyncDispose]();
  };
  try {
    const client = await testClient(server, token);
    opened.push(client);
    const browser = await launchBrowser();
    opened.push(browser);
    const { context, page } = await openPage(browser);
    return { server, client, context, page, [Symbol.asyncDispose]: close };
  } catch (error) {
    await close();
    throw error;
  }
}
