// Calling a saved skill from a program: `skills.<name>(input)` asks the host to check the input (one
// round trip to the host), then runs the skill's function in the same context. Compared with a
// tool call (the same round trip, plus the tool) and with calling a plain function of the program.
import { fileURLToPath } from 'node:url';
import { createToolRunner, loadTools } from '@mci/tools';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createSandboxPool, type SkillHost } from '../src/index.ts';

const TOOL_FILE = fileURLToPath(new URL('../test/fixtures/tools.mci.json', import.meta.url));
const CALLS = 500;

/** The p50 over 3 s of repeated runs of `loop` (a program answering its total ms for `calls` calls), in us per call. */
async function perCallUs(
  run: (code: string) => Promise<unknown[]>,
  loop: string,
  calls = CALLS,
): Promise<number> {
  const samples: number[] = [];
  const end = performance.now() + 3000;
  while (performance.now() < end) {
    const [ms] = await run(`const t = Date.now(); ${loop} return Date.now() - t;`);
    samples.push(((ms as number) / calls) * 1000);
  }
  return percentile(samples, 50);
}

export default async function bench(): Promise<BenchResult[]> {
  const pool = createSandboxPool({ size: 1 });
  const tools = createToolRunner(await loadTools(TOOL_FILE));
  const skills: SkillHost = {
    sources: { double: '"use strict";\nexports.default = async (input) => input.n * 2;' },
    checkInput() {},
    async save() {
      return undefined;
    },
  };
  const run = async (code: string) => {
    const result = await pool.execute({ code, tools, skills }).result;
    if (result.status !== 'success') throw new Error(`bench program failed: ${JSON.stringify(result.error)}`);
    return result.outputs;
  };
  try {
    const skill = await perCallUs(run, `for (let i = 0; i < ${CALLS}; i++) await skills.double({ n: i });`);
    const tool = await perCallUs(
      run,
      `for (let i = 0; i < ${CALLS}; i++) await tools.greet({ name: 'bench' });`,
    );
    const local = await perCallUs(
      run,
      `const double = async (input) => input.n * 2; for (let i = 0; i < ${CALLS * 1000}; i++) await double({ n: i });`,
      CALLS * 1000,
    );
    return [
      compared('skills.<name>(input) call from the sandbox, p50 of per-call means', skill, 'us', {
        name: 'tool-call round trip (text tool), p50',
        value: tool,
      }),
      compared('skills.<name>(input) call vs a plain async function of the program', skill, 'us', {
        name: 'plain async function call, p50',
        value: local,
      }),
    ];
  } finally {
    await tools.close();
    await pool.close();
  }
}
