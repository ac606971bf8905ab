import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createModel } from '@mci/agent';
import {
  answer,
  DRAW_PNG_PROGRAM,
  PNG_SIGNATURE,
  startFakeAnthropic,
  startFakeOpenAi,
} from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { suiteServer } from './support/suite-server.ts';

// Pictures of run results reach the model: a block draws a PNG in the sandbox, and the next request
// to the fake OpenAI and Anthropic servers (driven through the real SDKs) carries it as the
// provider's image part; a model that takes no images gets a note instead.

const KEY = 'sk-images-0123456789SECRET';
const dir = mkdtempSync(join(tmpdir(), 'mci-agent-images-'));
const toolFile = join(dir, 'tools.yaml');
writeFileSync(toolFile, "schemaVersion: '1.0'\ntools: []\n");

const suite = suiteServer({ file: toolFile }, () => rmSync(dir, { recursive: true, force: true }));

const BLOCK = `Drawing.\n\n\`\`\`ts exec=true\n${DRAW_PNG_PROGRAM}\n\`\`\`\n`;

/** The base64 picture of `parts` that is a PNG (the drawn square). */
function expectPngBase64(data: unknown): void {
  expect(typeof data).toBe('string');
  const bytes = Buffer.from(data as string, 'base64');
  expect(Uint8Array.from(bytes.subarray(0, 8))).toEqual(PNG_SIGNATURE);
}

describe('pictures of run results sent to models', () => {
  it('go to an OpenAI model as an image_url part of the results message', async () => {
    await using fake = await startFakeOpenAi(answer(BLOCK), answer('A small orange square.'));
    const model = await createModel('openai:fake-1', { baseURL: fake.url, apiKey: KEY, env: {} });
    expect(model.acceptsImages).toBe(true);
    const agent = new Agent({ host: suite.client, model, system: 'sys' });
    expect(await agent.send('Draw a square.')).toMatchObject({ reason: 'answered', steps: 2 });
    const messages = fake.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
    const results = messages.at(-1)!;
    expect(results.role).toBe('user');
    const parts = results.content as Array<Record<string, any>>;
    expect(parts[0]).toMatchObject({ type: 'text', text: expect.stringContaining('[image/png, 120 bytes]') });
    expect(parts[0]!.text).toContain('(The picture in the outputs follows.)');
    expect(parts.slice(1).map((part) => part.type)).toEqual(['image_url']);
    const url = parts[1]!.image_url.url as string;
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expectPngBase64(url.slice('data:image/png;base64,'.length));
  });

  it('go to an Anthropic model as a base64 image block of the results message', async () => {
    await using fake = await startFakeAnthropic(answer(BLOCK), answer('A small orange square.'));
    const model = await createModel('anthropic:fake-1', { baseURL: fake.url, apiKey: KEY, env: {} });
    const agent = new Agent({ host: suite.client, model, system: 'sys' });
    expect(await agent.send('Draw a square.')).toMatchObject({ reason: 'answered', steps: 2 });
    const messages = fake.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
    const parts = messages.at(-1)!.content as Array<Record<string, any>>;
    expect(parts.map((part) => part.type)).toEqual(['text', 'image']);
    expect(parts[1]!.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expectPngBase64(parts[1]!.source.data);
  });

  it('are named in a note to a model that takes no images (the default for ollama:)', async () => {
    await using fake = await startFakeOpenAi(answer(BLOCK), answer('I cannot see it.'));
    const model = await createModel('ollama:fake-1', { baseURL: fake.url, env: {} });
    expect(model.acceptsImages).toBe(false);
    const agent = new Agent({ host: suite.client, model, system: 'sys' });
    await agent.send('Draw a square.');
    const messages = fake.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
    const content = messages.at(-1)!.content;
    expect(typeof content).toBe('string');
    expect(content).toContain(
      '(1 picture in the outputs (image/png) not shown: this model takes no image input.)',
    );
    expect(content).not.toContain('iVBOR');
  });

  it('can be turned on for a provider whose default is off', async () => {
    await using fake = await startFakeOpenAi(answer(BLOCK), answer('Seen.'));
    const model = await createModel('ollama:llava', { baseURL: fake.url, env: {}, images: true });
    await new Agent({ host: suite.client, model, system: 'sys' }).send('Draw a square.');
    const messages = fake.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
    expect((messages.at(-1)!.content as Array<{ type: string }>).map((part) => part.type)).toEqual([
      'text',
      'image_url',
    ]);
  });
});
