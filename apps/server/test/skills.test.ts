import { rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { answer, type FakeProvider, startFakeOpenAi } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/server.ts';
import { toolFileDir } from './support/greet-tools.ts';
import { listenLocal, requestsAs } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { mci } from './support/mci.ts';

// Saved skills through a whole server: saved by one program (or over HTTP), called by the next,
// checked at save, their input validated, a new version seen by later runs only, and another
// principal seeing and calling nothing.

const { dir, file } = toolFileDir(
  'mci-skills-',
  `schemaVersion: '1.0'
tools:
  - name: greet
    inputSchema: { type: object, properties: { name: { type: string } }, required: [name] }
    execution: { type: text, text: 'Hello, {{props.name}}!' }
`,
);

const MALLORY = 'mallory-token';
/** One principal per test, so the skills one test saves are not seen by another. */
const TESTS = ['save', 'validate', 'check', 'versions', 'hidden', 'pages', 'cli', 'chat'] as const;
const tokenOf = (test: (typeof TESTS)[number]) => `alice-${test}-token`;

// One server for the file (a sandbox pool and the checker's warm-up per server are the cost of a
// start); it hosts conversations with a fake model for the system-prompt test.
let server: MciServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeOpenAi(answer('Noted.'), answer('Noted.'));
  server = await createServer({
    port: 0,
    file,
    db: join(dir, 'skills.db'),
    logLevel: 'silent',
    concurrency: 1,
    allowNet: ['127.0.0.1'],
    tokens: [
      ...TESTS.map((test) => ({ token: tokenOf(test), role: 'client' as const, id: `alice-${test}` })),
      { token: MALLORY, role: 'client', id: 'mallory' },
    ],
    chat: {
      models: ['openai:fake-1'],
      modelOptions: { baseURL: fake.url, env: { OPENAI_API_KEY: 'sk-skills-test-key' }, maxRetries: 0 },
    },
  });
});
afterAll(async () => {
  await server?.close({ graceMs: 0 });
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

const GREETER = `export default async function greetAll(input: { names: string[]; excited?: boolean }) {
  const out: string[] = [];
  for (const name of input.names) {
    const result = await tools.greet({ name });
    out.push(result.content[0].text + (input.excited ? '!!' : ''));
  }
  return out;
}`;

/** Saves a skill over HTTP (`POST /skills`) as the principal `call` speaks for. */
function saveSkill(call: ReturnType<typeof requestsAs>, name: string, description: string, code: string) {
  return call('POST', '/skills', { name, description, code });
}

async function run(call: ReturnType<typeof requestsAs>, code: string) {
  const answer = await call('POST', '/processes', { code, block: true });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe('skills', () => {
  it('a skill saved by one program is called by the next, with tools, in the calling run', async () => {
    const ALICE = tokenOf('save');
    const alice = requestsAs(server.url, ALICE);
    const saved = await run(
      alice,
      `return await skills.save({ name: 'greetAll', description: 'Greets everyone.', code: ${JSON.stringify(GREETER)} });`,
    );
    expect(saved.status).toBe('success');
    expect(saved.outputs[0]).toMatchObject({
      name: 'greetAll',
      version: 1,
      createdBy: saved.pid,
      inputSchema: {
        type: 'object',
        properties: { names: { type: 'array', items: { type: 'string' } }, excited: { type: 'boolean' } },
        required: ['names'],
      },
    });
    const called = await run(
      alice,
      `return await skills.greetAll({ names: ['Ada', 'Alan'], excited: true });`,
    );
    expect(called).toMatchObject({ status: 'success', outputs: [['Hello, Ada!!!', 'Hello, Alan!!!']] });
    const dts = await fetch(`${server.url}/tools.d.ts`, { headers: { Authorization: `Bearer ${ALICE}` } });
    expect(await dts.text()).toMatch(
      /greetAll\(input: \{[\s\S]*names: string\[\];[\s\S]*\}\): Promise<any>;/,
    );
  });

  it('validates the input against the schema, naming the path', async () => {
    const ALICE = tokenOf('validate');
    const alice = requestsAs(server.url, ALICE);
    expect((await saveSkill(alice, 'greetAll', 'x', GREETER)).status).toBe(201);
    const bad = await run(
      alice,
      `try { await skills.greetAll({ names: ['a', 7] as any }); } catch (e) { return [e.code, e.message]; }`,
    );
    expect(bad.outputs).toEqual([
      ['VALIDATION', 'skills.greetAll: Invalid input: input.names.1 must be string (got number)'],
    ]);
    const missing = await run(alice, 'await skills.greetAll({} as any);');
    expect(missing.status).toBe('failed');
    expect(missing.error.message).toBe('skills.greetAll: Invalid input: input.names is required');
  });

  it('refuses code that does not compile, with the diagnostics, over HTTP and from a program', async () => {
    const ALICE = tokenOf('check');
    const alice = requestsAs(server.url, ALICE);
    const typo = await saveSkill(
      alice,
      'broken',
      'x',
      'export default async () => {\n  return await tools.gret({ name: "a" });\n};',
    );
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({
      code: 'CHECK_FAILED',
      path: 'code',
      diagnostics: [{ line: 2, column: 22, message: 'tools.gret does not exist. Did you mean tools.greet?' }],
    });
    const noDefault = await saveSkill(alice, 'nothing', 'x', 'const x = 1;');
    expect(noDefault.body.diagnostics[0].message).toMatch(/export a function as its default/);
    for (const name of ['save', 'list', '1abc', 'has-dash', 'constructor', 'class']) {
      const answer = await saveSkill(alice, name, 'x', GREETER);
      expect(answer.status, name).toBe(400);
      expect(answer.body.path).toBe('name');
    }
    const fromProgram = await run(
      alice,
      `try { await skills.save({ name: 'bad', description: 'x', code: 'export default 1;' }); } catch (e) { return [e.code, e.message]; }`,
    );
    expect(fromProgram.outputs[0][0]).toBe('CHECK_FAILED');
    expect(fromProgram.outputs[0][1]).toMatch(/must be a function/);
    expect((await alice('GET', '/skills')).body).toEqual({ items: [] });
  });

  it('a new version changes later runs only; a running run keeps the version it started with', {
    timeout: 60_000,
  }, async () => {
    const ALICE = tokenOf('versions');
    const alice = requestsAs(server.url, ALICE);
    const v1 = await saveSkill(alice, 'answer', 'The answer.', 'export default async () => 1;');
    expect(v1.body).toMatchObject({ version: 1 });
    // A run that calls the skill, then waits on a request the test answers after saving version 2.
    let release: () => void = () => {};
    let arrived: () => void = () => {};
    const waiting = new Promise<void>((resolve) => (arrived = resolve));
    const gate = createHttpServer((_req, res) => {
      arrived();
      release = () => res.end('go');
    });
    const gateUrl = await listenLocal(gate);
    const slow = await alice('POST', '/processes', {
      code: `const a = await skills.answer();\nawait fetch('${gateUrl}/');\nreturn [a, await skills.answer()];`,
    });
    const pid = slow.body.pid as number;
    await waiting;
    const v2 = await saveSkill(alice, 'answer', 'The new answer.', 'export default async () => 2;');
    expect(v2.body).toMatchObject({ version: 2 });
    // The waiting run calls the skill again after version 2 is saved.
    release();
    let result = await alice('GET', `/processes/${pid}/runs/1`);
    while (result.body.state !== 'idle') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      result = await alice('GET', `/processes/${pid}/runs/1`);
    }
    gate.close();
    expect(result.body.outputs).toEqual([[1, 1]]);
    const later = await run(alice, 'return await skills.answer();');
    expect(later.outputs).toEqual([2]);
    expect((await alice('GET', '/skills/answer/versions/1')).body).toMatchObject({
      version: 1,
      code: 'export default async () => 1;',
    });
    expect((await alice('GET', '/skills/answer')).body).toMatchObject({
      version: 2,
      description: 'The new answer.',
    });
  });

  it('another principal cannot see, read, call or delete a skill', async () => {
    const ALICE = tokenOf('hidden');
    const alice = requestsAs(server.url, ALICE);
    const mallory = requestsAs(server.url, MALLORY);
    await saveSkill(alice, 'secret', 'x', 'export default async () => 42;');
    expect((await mallory('GET', '/skills')).body).toEqual({ items: [] });
    expect((await mallory('GET', '/skills/secret')).status).toBe(404);
    expect((await mallory('GET', '/skills/secret/versions/1')).status).toBe(404);
    expect((await mallory('DELETE', '/skills/secret')).status).toBe(404);
    const call = await run(mallory, 'return await skills.secret();');
    expect(call.status).toBe('failed');
    expect(call.error.code).toBe('CHECK_FAILED');
    const unchecked = await mallory('POST', '/processes', {
      code: 'return await skills.secret();',
      check: 'off',
      block: true,
    });
    expect(unchecked.body.error.message).toMatch(/Unknown skill "secret"\. No skill is saved yet\./);
    const dts = await fetch(`${server.url}/tools.d.ts`, { headers: { Authorization: `Bearer ${MALLORY}` } });
    expect(await dts.text()).not.toMatch(/secret/);
    expect((await run(alice, 'return await skills.secret();')).outputs).toEqual([42]);
  });

  it('lists skills newest first in pages, and deletes one with its versions', async () => {
    const ALICE = tokenOf('pages');
    const alice = requestsAs(server.url, ALICE);
    for (const name of ['one', 'two', 'three'])
      await saveSkill(alice, name, name, 'export default async () => 1;');
    const first = await alice('GET', '/skills?limit=2');
    expect(first.body.items.map((s: { name: string }) => s.name)).toEqual(['three', 'two']);
    expect(first.body.items[0].js).toBeUndefined();
    const second = await alice('GET', `/skills?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ items: [{ name: 'one' }] });
    expect(second.body.nextCursor).toBeUndefined();
    expect((await alice('GET', '/skills?limit=0')).body.path).toBe('limit');
    expect((await alice('DELETE', '/skills/two')).status).toBe(204);
    expect((await alice('GET', '/skills/two/versions/1')).status).toBe(404);
    expect((await alice('GET', '/skills')).body.items).toHaveLength(2);
  });

  it('mci skill save PID takes the code of a process; mci skill list and rm', async () => {
    const ALICE = tokenOf('cli');
    const alice = requestsAs(server.url, ALICE);
    const made = await alice('POST', '/processes', { code: GREETER, autorun: false });
    const pid = made.body.pid as number;
    const remote = ['--url', server.url, '--token', ALICE];
    const saved = await mci([
      'skill',
      'save',
      String(pid),
      '--name',
      'greetAll',
      '--description',
      'Greets.',
      ...remote,
    ]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(saved.stdout)).toMatchObject({ name: 'greetAll', version: 1, description: 'Greets.' });
    expect((await run(alice, `return await skills.greetAll({ names: ['Bo'] });`)).outputs).toEqual([
      ['Hello, Bo!'],
    ]);
    const bad = await alice('POST', '/processes', { code: 'export default 3;', autorun: false });
    const refused = await mci(['skill', 'save', String(bad.body.pid), '--name', 'three', ...remote]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/must be a function.*\[CHECK_FAILED\]/);
    const others = await mci([
      'skill',
      'save',
      String(pid),
      '--name',
      'stolen',
      '--url',
      server.url,
      '--token',
      MALLORY,
    ]);
    expect(others.code).toBe(1);
    expect(others.stderr).toMatch(/NOT_FOUND/);
    expect((await mci(['skill', 'list', ...remote])).stdout).toBe('greetAll\tv1\tGreets.\n');
    expect((await mci(['skill', 'rm', 'greetAll', ...remote])).code).toBe(0);
    expect((await mci(['skill', 'list', ...remote])).stdout).toBe('');
  });

  it("a server-hosted conversation's system prompt declares the principal's skills", async () => {
    const ALICE = tokenOf('chat');
    await saveSkill(requestsAs(server.url, ALICE), 'greetAll', 'Greets everyone.', GREETER);
    const systemOf = async (token: string) => {
      await using socket = await openJsonSocket(server.wsUrl, token);
      await socket.request({ type: 'chat.start', message: 'Hi.' });
      await socket.waitFor((m) => m.type === 'chat.done' || m.type === 'chat.error');
      const messages = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
      return messages.find((m) => m.role === 'system')!.content;
    };
    const alice = await systemOf(ALICE);
    expect(alice).toContain('Your saved skills, called as skills.NAME(input)');
    expect(alice).toMatch(/\/\*\* Greets everyone\. \*\/\n\s+greetAll\(input: \{/);
    expect(await systemOf(MALLORY)).not.toContain('greetAll');
  });
});
