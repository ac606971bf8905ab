// A program that calls tools in a loop gets each result as an isolate task, and runs its
// continuation there while the worker's thread stays free. These tests pin what that guarantees: a
// long continuation after such a loop still streams its outputs and tool calls, still times out and
// can be killed, and its failures (an unhandled rejection in its last moment too) fail the run.
import { describe, expect, it } from 'vitest';
import type { ToolHost } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1 });

/** A host whose `echo` answers at once and whose `record` notes that it was called. */
function recordingHost(onCall: (name: string) => void = () => {}) {
  const calls: string[] = [];
  const host: ToolHost = {
    list: () => [{ name: 'echo' }, { name: 'record' }],
    async execute(name, props) {
      calls.push(name);
      onCall(name);
      return { isError: false, content: [{ type: 'text', text: JSON.stringify(props) }] };
    },
  };
  return { host, calls };
}

/** Twenty brief tool calls before the part under test. */
const LOOP = 'for (let i = 0; i < 20; i++) await tools.echo({ i });\n';

describe('continuations after a loop of tool calls', () => {
  it('get every result, in order, with the right values', async () => {
    const { host } = recordingHost();
    const r = await run(
      pool,
      'const seen = [];\nfor (let i = 0; i < 50; i++) seen.push(JSON.parse((await tools.echo({ i })).content[0].text).i);\nreturn seen;',
      { tools: host },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([Array.from({ length: 50 }, (_, i) => i)]);
  });

  it('stream outputs and make tool calls while a long continuation still runs', async () => {
    // The continuation never ends by itself: the test kills it once the output and the tool call
    // arrived, so both must arrive while it still runs (held back to its end, they never would,
    // and the run would end at its timeout instead).
    let sawOutput = false;
    let sawRecord = false;
    const killWhenBoth = () => {
      if (sawOutput && sawRecord) execution.kill();
    };
    const { host } = recordingHost((name) => {
      sawRecord ||= name === 'record';
      killWhenBoth();
    });
    const execution = pool.execute({
      code: `${LOOP}output('working');\ntools.record({});\nwhile (true) {}`,
      tools: host,
      timeoutMs: 15_000,
      onEvent: (event) => {
        sawOutput ||= event.type === 'output' && event.value === 'working';
        killWhenBoth();
      },
    });
    const result = await execution.result;
    expect(result.status).toBe('canceled');
    expect(result.outputs).toEqual(['working']);
  });

  it('time out at the deadline', async () => {
    const { host } = recordingHost();
    const r = await run(pool, `${LOOP}while (true) {}`, { tools: host, timeoutMs: 600 });
    expect(r.status).toBe('timeout');
    expect(r.error).toEqual({ name: 'TimeoutError', message: 'Execution timed out after 600 ms' });
  });

  it('end at once on kill, and the pool goes on serving', async () => {
    const { host } = recordingHost();
    const execution = pool.execute({
      code: `${LOOP}output('spinning');\nwhile (true) {}`,
      tools: host,
      timeoutMs: 60_000,
      onEvent: (event) => {
        if (event.type === 'output' && event.value === 'spinning') {
          execution.kill();
        }
      },
    });
    const result = await execution.result;
    // Canceled by the kill: the 60 s timeout would end it as `timeout`.
    expect(result.status).toBe('canceled');
    const next = await run(pool, 'return 1 + 1');
    expect(next.outputs).toEqual([2]);
  });

  it('fail the execution on an unhandled rejection, also right before the program returns', async () => {
    const { host } = recordingHost();
    const late = await run(
      pool,
      `${LOOP}tools.echo({}).then(() => { Promise.reject(new Error('in a then')) });\nawait tools.echo({});\nawait tools.echo({});`,
      { tools: host },
    );
    expect(late.status).toBe('failed');
    expect(late.error).toMatchObject({ name: 'Error', message: 'in a then', line: 2 });
    const last = await run(pool, `${LOOP}Promise.reject(new RangeError('just before return'));`, {
      tools: host,
    });
    expect(last.status).toBe('failed');
    expect(last.error).toMatchObject({ name: 'RangeError', message: 'just before return', line: 2 });
  });

  it('reach the synchronous host functions and fail cleanly on running out of memory', async () => {
    const { host } = recordingHost();
    const apis = await run(
      pool,
      `${LOOP}return [new URL('/a?b=1', 'https://x.example').href, new TextEncoder().encode('hé').length, crypto.randomUUID().length];`,
      { tools: host },
    );
    expect(apis.outputs).toEqual([['https://x.example/a?b=1', 3, 36]]);
    const oom = await run(pool, `${LOOP}const a = [];\nwhile (true) a.push(new Array(1e5).fill(1));`, {
      tools: host,
      memoryLimitMb: 32,
    });
    expect(oom.status).toBe('failed');
    expect(oom.error?.message).toBe('The program ran out of memory (memoryLimitMb 32)');
  });
});
