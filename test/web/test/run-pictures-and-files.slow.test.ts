import { readFileSync } from 'node:fs';
import { DRAW_PNG_PROGRAM } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';

// A run's pictures and files in the console: output.image() shown as an image, output.file() as a
// download link that saves the file's bytes, for a signed-in console too (the link sends the token).

const PROGRAM = `${DRAW_PNG_PROGRAM}
output.file('report.csv', 'city,temperature\\nOslo,4\\n', 'text/csv');`;

describe('a run with pictures and files', () => {
  it('shows the drawn PNG inline and the files as download links', async () => {
    const TOKEN = 'console-files-token';
    await using session = await openConsole(
      { tokens: [{ token: TOKEN, role: 'client', id: 'alice' }] },
      TOKEN,
    );
    const { server, client, context, page } = session;
    await context.addInitScript((token) => localStorage.setItem('mci.token', token), TOKEN);
    const process = await client.createProcess(PROGRAM);
    await client.wait(process.pid);
    await page.goto(`${server.url}/processes/${process.pid}`);

    const image = page.getByRole('img', { name: 'Output 1, item 1 (image/png)' });
    await image.waitFor();
    expect(await image.evaluate((element) => (element as HTMLImageElement).naturalWidth)).toBe(4);

    const csv = page.getByRole('link', { name: 'Download report.csv' });
    await csv.waitFor();
    expect(await page.getByRole('link', { name: 'Download square.png' }).count()).toBe(1);
    const [download] = await Promise.all([page.waitForEvent('download'), csv.click()]);
    expect(download.suggestedFilename()).toBe('report.csv');
    expect(readFileSync((await download.path())!, 'utf8')).toBe('city,temperature\nOslo,4\n');
    expect(await page.getByRole('alert').count()).toBe(0);
    await screenshotAll(page, 'run-pictures-and-files');
  });

  it("shows a tool result's sound as an audio player and its web links as links", async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    // A WAV header with no samples: a valid, silent sound.
    const wav = Buffer.alloc(44);
    wav.write('RIFF', 0);
    wav.writeUInt32LE(36, 4);
    wav.write('WAVEfmt ', 8);
    wav.writeUInt32LE(16, 16);
    wav.writeUInt16LE(1, 20);
    wav.writeUInt16LE(1, 22);
    wav.writeUInt32LE(8000, 24);
    wav.writeUInt32LE(8000, 28);
    wav.writeUInt16LE(1, 32);
    wav.writeUInt16LE(8, 34);
    wav.write('data', 36);
    const content = [
      { type: 'audio', mimeType: 'audio/wav', data: wav.toString('base64') },
      { type: 'resource_link', uri: 'https://example.com/report', name: 'The report' },
      { type: 'resource_link', uri: 'javascript:alert(1)', name: 'Not a link' },
    ];
    const process = await client.createProcess(`output(${JSON.stringify({ isError: false, content })});`);
    await client.wait(process.pid);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const audio = page.getByLabel('Output 1, item 1 (audio/wav)');
    await audio.waitFor();
    expect(await audio.evaluate((element) => element.tagName)).toBe('AUDIO');
    // The console's Content-Security-Policy lets it load (media-src allows data: URLs).
    await expect
      .poll(() =>
        audio.evaluate((element) => {
          const media = element as HTMLAudioElement;
          return media.error ? `error ${media.error.code}` : media.readyState >= 1 ? 'loaded' : 'loading';
        }),
      )
      .toBe('loaded');
    const link = page.getByRole('link', { name: 'The report' });
    expect(await link.getAttribute('href')).toBe('https://example.com/report');
    expect(await page.getByRole('link', { name: 'Not a link' }).count()).toBe(0);
  });
});
