import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { examplePath } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mci } from './support/mci.ts';

// Every tool of the example tool file works out of the box: its http tools call the demo API that
// `pnpm dev` starts beside the server (examples/demo-api), here on a free port.

let api: ChildProcess;
let apiUrl: string;

beforeAll(async () => {
  api = spawn(process.execPath, [examplePath('demo-api', 'src', 'main.ts')], {
    env: { ...process.env, DEMO_API_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: api.stdout! }), 'line')) as [string];
  apiUrl = /listening on (\S+)/.exec(line)![1]!;
});

afterAll(async () => {
  if (api && api.exitCode === null) {
    api.kill();
    await once(api, 'exit');
  }
});

/** Props for each example tool, and what its text result contains. */
const cases: Record<string, { props: unknown; says: RegExp }> = {
  greet: { props: { name: 'Ada', excited: true }, says: /^Hello, Ada!!!$/ },
  shopping_list: { props: { items: [{ name: 'pears', quantity: 3 }] }, says: /- 3 x pears/ },
  api_get: { props: { path: 'items/1' }, says: /"name":\s*"apples"/ },
  api_post: { props: { path: 'items', data: { name: 'pears', quantity: 3 } }, says: /"id":\s*3/ },
  read_note: { props: { name: 'welcome' }, says: /greet, shopping_list/ },
  render_report: { props: { title: 'Stock', rows: [{ label: 'pears', value: 3 }] }, says: /Stock/ },
  current_time: { props: {}, says: /UTC/ },
  list_notes: { props: {}, says: /welcome\.md/ },
  echo: { props: { message: 'hi there' }, says: /^hi there\n?$/ },
};

const exec = (tool: string, props: unknown) =>
  mci(['exec', tool, '--props', JSON.stringify(props), '--file', examplePath('mci.yaml')], {
    env: { DEMO_API_URL: apiUrl },
  });

describe('the example tool file', () => {
  it('has a case here for each of its tools', async () => {
    const run = await mci(['list', '--format', 'json', '--file', examplePath('mci.yaml')]);
    expect(run.code).toBe(0);
    const names = (JSON.parse(run.stdout) as Array<{ name: string }>).map((tool) => tool.name);
    expect(names.toSorted()).toEqual(Object.keys(cases).toSorted());
  });

  it.each(Object.entries(cases))('%s works', async (tool, { props, says }) => {
    const run = await exec(tool, props);
    const result = JSON.parse(run.stdout) as { isError: boolean; content: Array<{ text?: string }> };
    expect(result.isError, run.stdout).toBe(false);
    expect(run.code).toBe(0);
    expect(result.content.map((item) => item.text ?? '').join('')).toMatch(says);
  });

  it('api_post without the demo token is refused by the API (an isError result, exit 1)', async () => {
    const run = await mci(
      ['exec', 'api_post', '--props', '{"path":"items","data":{}}', '--file', examplePath('mci.yaml')],
      { env: { DEMO_API_URL: apiUrl, DEMO_API_TOKEN: 'wrong-token' } },
    );
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ isError: true });
  });
});
