import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answer, examplePath, startFakeOpenAi, startMci } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/server.ts';
import { GREET_BLOCK, greetToolDir } from './support/greet-tools.ts';
import { mci } from './support/mci.ts';

// `mci chat` as a user runs it: a real child process, a fake OpenAI server behind the real SDK, and
// either an embedded server (--local) or a running one (--url).

const KEY = 'sk-cli-aabbccddeeff00112233SECRET';
const { dir, file: toolFile } = greetToolDir('mci-chat-cli-', 'Hello from the tool!');
const BLOCK = GREET_BLOCK;
const devTranscript = examplePath('transcripts', 'dev-chat.md');
const examples = examplePath('mci.yaml');

let server: MciServer;
beforeAll(async () => {
  server = await createServer({ port: 0, file: examples, logLevel: 'silent' });
});
afterAll(async () => {
  await server?.close({ graceMs: 0 });
});

/** `mci chat --local` on the greet tool file, with the fake OpenAI model at `modelUrl`, then `args`. */
const chatLocal = (modelUrl: string, ...args: string[]) =>
  mci(['chat', '--local', '--file', toolFile, '--model', 'openai:fake-1', '--model-url', modelUrl, ...args], {
    cwd: dir,
    env: { OPENAI_API_KEY: KEY },
  });

// Each test runs a whole chat turn (and, with --local, a whole server): seconds on a loaded machine,
// so a wider timeout than the default 20 s.
describe('mci chat', { timeout: 60_000 }, () => {
  it('one-shot with --local: status lines on stderr, the final answer on stdout', async () => {
    await using fake = await startFakeOpenAi(answer(`Checking.\n\n${BLOCK}`), answer('The tool says hello.'));
    const run = await chatLocal(fake.url, 'Greet me');
    expect(run.stderr).toMatch(/system prompt: .* KB .*1 tools/);
    expect(run.stderr).toMatch(/pid \d+ \[block 0\]: success/);
    expect(run.stdout).toBe('The tool says hello.\n');
    expect(run.code).toBe(0);
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('Hello from the tool!');
    expect(run.stdout + run.stderr).not.toContain('SECRET');
  });

  it('--json prints every event as a JSON line', async () => {
    await using fake = await startFakeOpenAi(answer(BLOCK), answer('done'));
    const run = await chatLocal(fake.url, '--json', 'go');
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    const types = new Set(events.map((event) => event.type));
    for (const type of ['token', 'intent', 'process', 'output', 'stream.result', 'step', 'done']) {
      expect(types.has(type), type).toBe(true);
    }
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'answered', steps: 2, answer: 'done' });
    expect(run.stdout).not.toContain('SECRET');
  });

  it('plays the dev transcript against a running server (--url), no key needed', async () => {
    const run = await mci(
      ['chat', '--url', server.url, '--model', `replay:${devTranscript}`, 'Greet Ada and plan pancakes'],
      { cwd: dir, env: { MCI_REPLAY_RATE: '0' } },
    );
    expect(run.stderr).toMatch(/pid \d+ \[block 0\]: success/);
    expect(run.stderr).toMatch(/pid \d+ \[block 1\]: success/);
    expect(run.stderr).toContain('Hello, Ada!!!');
    expect(run.stdout).toContain('the shopping list for pancakes is 3 eggs');
    expect(run.code).toBe(0);
  });

  it('without a prompt, answers each line of input in turn (input ending mid-turn loses no line)', async () => {
    const run = await mci(['chat', '--url', server.url, '--model', `replay:${devTranscript}`], {
      cwd: dir,
      env: { MCI_REPLAY_RATE: '0' },
      input: 'Greet Ada\nAnd again\n',
    });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('readline was closed');
    // The replay model plays the transcript again for the second line: two turns, two answers.
    expect(run.stdout.match(/the shopping list for pancakes is 3 eggs/g)).toHaveLength(2);
    expect(run.stderr.match(/pid \d+ \[block 1\]: success/g)).toHaveLength(2);
  });

  it('a model error exits 1 naming provider, model and status, without the key', async () => {
    await using fake = await startFakeOpenAi(
      ...Array.from({ length: 3 }, () => ({
        status: 500,
        message: `failed for ${KEY}`,
        headers: { 'retry-after-ms': '1' },
      })),
    );
    const run = await mci(
      ['chat', '--url', server.url, '--model', 'openai:fake-1', '--model-url', fake.url, 'hi'],
      { cwd: dir, env: { OPENAI_API_KEY: KEY } },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/mci chat: openai model fake-1 at .* answered HTTP 500/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(run.stdout + run.stderr).not.toContain('SECRET');
  });

  it('Ctrl-C cancels the turn and kills its running process (exit 130)', async () => {
    const transcript = join(dir, 'spin.md');
    writeFileSync(
      transcript,
      '## assistant\nSpinning:\n\n```ts exec=true\nwhile (true) {}\n```\n\nStill writing.\n',
    );
    // The real program and a real signal.
    const child = startMci(['chat', '--url', server.url, '--model', `replay:${transcript}`, 'spin'], {
      cwd: dir,
      env: { ...process.env, MCI_REPLAY_RATE: '20' },
    });
    let stderr = '';
    const running = new Promise<number>((resolve) => {
      child.stderr?.on('data', (chunk) => {
        stderr += String(chunk);
        const pid = /pid (\d+) \[block 0\]: running/.exec(stderr)?.[1];
        if (pid) resolve(Number(pid));
      });
    });
    const pid = await running;
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('(stopped: canceled');
    expect(await server.manager.get(pid, { id: 'local', role: 'operator' })).toMatchObject({
      state: 'idle',
      status: 'canceled',
    });
  });

  it('mci serve refuses a model it cannot make (exit 2, naming the variable to set)', async () => {
    const run = await mci(
      ['serve', '--port', '0', '--db', ':memory:', '--file', toolFile, '--model', 'openai:gpt-x'],
      { cwd: dir, env: { OPENAI_API_KEY: '', MCI_MODEL_API_KEY: '' } },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('openai model gpt-x needs an API key: set OPENAI_API_KEY');
  });

  it('usage errors exit 2: no model, a missing key', async () => {
    const none = await mci(['chat', '--url', server.url, 'hi'], { cwd: dir, env: { MCI_MODEL: '' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no model');
    const keyless = await mci(['chat', '--url', server.url, '--model', 'anthropic:claude-x', 'hi'], {
      cwd: dir,
      env: {
        ANTHROPIC_API_KEY: '',
        MCI_MODEL_API_KEY: '',
      },
    });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('set ANTHROPIC_API_KEY');
  });
});
