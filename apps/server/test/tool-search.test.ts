import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentEvent, createAgent, DEFAULT_TOOL_PROMPT_BUDGET, RESULTS_PREFIX } from '@mci/agent';
import { connect } from '@mci/client';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/server.ts';
import { describeTool } from './support/generated-tools.ts';
import { toolFileDir } from './support/greet-tools.ts';
import { suiteServer } from './support/suite-server.ts';

// A tool file of 1,000 tools: the generated system prompt stays within its budget and lists the
// tools by name, tools.search finds a tool by the words of its description, and a model (a replayed
// transcript) that searches, describes and calls a tool gets its answer, through a real server.

const dir = mkdtempSync(join(tmpdir(), 'mci-tool-search-'));
const toolFile = join(dir, 'tools.yaml');
writeFileSync(
  toolFile,
  `schemaVersion: '1.0'\ntools:\n${Array.from(
    { length: 1000 },
    (_, i) =>
      `  - name: tool_${i}\n    description: ${JSON.stringify(describeTool(i))}\n    tags: [generated]\n    inputSchema: { type: object, properties: { id: { type: string } }, required: [id] }\n    execution: { type: text, text: 'tool ${i} did {{props.id}}' }\n`,
  ).join('')}`,
);
// Tool 544 (`Archives shipments for the finance team.`) is the one the transcript looks for.
const transcript = join(dir, 'find-and-call.md');
writeFileSync(
  transcript,
  `## assistant

Let me find the tool.

\`\`\`ts exec=true
const [best] = await tools.search('archive shipments finance', { limit: 3 });
const tool = await tools.describe(best.name);
const result = await tools[tool.name]({ id: 'crate-7' });
output({ name: tool.name, declaration: tool.declaration, text: result.content[0].text });
\`\`\`

## assistant

The finance team's shipments are archived: tool 544 did crate-7.
`,
);

const suite = suiteServer({ file: toolFile, concurrency: 1 }, () =>
  rmSync(dir, { recursive: true, force: true }),
);

/** Runs `code` on the server and returns its outputs (or its error). */
async function run(code: string): Promise<{ outputs: unknown[]; error?: unknown }> {
  const { pid } = await suite.client.createProcess(code);
  await suite.client.wait(pid);
  const result = await suite.client.getResult(pid);
  return { outputs: result.outputs, ...(result.error !== undefined && { error: result.error }) };
}

describe('1,000 tools', () => {
  it('keep the generated system prompt within its budget, listing the tools by name', async () => {
    const agent = await createAgent({ client: suite.client, model: `replay:${transcript}` });
    const report = agent.prompt!.report;
    expect(report).toMatchObject({ listed: true, tools: 1000 });
    expect(Math.ceil(report.toolsDtsBytes / 4)).toBeLessThanOrEqual(DEFAULT_TOOL_PROMPT_BUDGET);
    // The how-to, then the tools part: the whole prompt is the budget and a little more.
    expect(report.estimatedTokens).toBeLessThan(DEFAULT_TOOL_PROMPT_BUDGET + 1500);
    expect(agent.system).toContain('- tool_0: Lists invoices for the billing team.');
    expect(agent.system).toContain(
      'search(query: string, options?: { limit?: number }): Promise<ToolMatch[]>;',
    );
    expect(agent.system).toContain('tools.describe(name)');
    expect(agent.system).toMatch(/\nAlso: tool_\d+, .*tool_999$/m);
    expect(agent.system).not.toContain('tool_0(props');

    const small = await createAgent({
      client: suite.client,
      model: `replay:${transcript}`,
      toolPromptBudget: 200,
    });
    // A budget smaller than the sandbox's globals keeps the globals and names no tool.
    expect(small.prompt!.report.toolsDtsBytes).toBeLessThan(report.toolsDtsBytes);
    expect(small.system).toContain('...and 1000 more: find them with tools.search(query).');
    expect(small.system).not.toContain('tool_0');
    const whole = await createAgent({
      client: suite.client,
      model: `replay:${transcript}`,
      toolPromptBudget: 1_000_000,
    });
    expect(whole.prompt!.report).toMatchObject({ tools: 1000 });
    expect(whole.prompt!.report.listed).toBeUndefined();
    expect(whole.system).toContain('tool_999(props: {');
  });

  it('are found by the words of their descriptions, best first', async () => {
    const { outputs } = await run(`
      const names = async (query) => (await tools.search(query, { limit: 3 })).map((t) => t.name);
      output(await names('exports contracts for the research team'));
      output(await names('hiring alerts merge'));
      output(await names('tool_42'));
      output((await tools.search('payments', { limit: 100 })).length);`);
    expect((outputs[0] as string[])[0]).toBe(`tool_${775}`);
    expect(outputs[1]).toContain('tool_988');
    expect((outputs[2] as string[])[0]).toBe('tool_42');
    expect(outputs[3]).toBe(100);
    expect(describeTool(775)).toBe('Exports contracts for the research team.');
    expect(describeTool(988)).toBe('Merges alerts for the hiring team.');
  });

  it('are described with the declaration /tools.d.ts gives them', async () => {
    const dts = await (await fetch(`${suite.server.url}/tools.d.ts`)).text();
    const { outputs } = await run('output(await tools.describe("tool_7"))');
    const description = outputs[0] as { declaration: string };
    expect(description).toEqual({
      name: 'tool_7',
      description: 'Checks invoices for the billing team.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      declaration:
        '/** Checks invoices for the billing team. */\ntool_7(props: {\n  id: string;\n}): Promise<ToolResult>;\n',
    });
    expect(dts).toContain(
      '  /** Checks invoices for the billing team. */\n  tool_7(props: {\n    id: string;\n  })',
    );
  });

  it('are searched, described and called by a replayed model, end to end', async () => {
    const events: AgentEvent[] = [];
    const agent = await createAgent({
      client: suite.client,
      model: `replay:${transcript}`,
      tokensPerSecond: 0,
      onEvent: (event) => events.push(event),
    });
    const turn = await agent.send('Archive the shipments of the finance team for crate-7.');
    expect(turn).toMatchObject({
      reason: 'answered',
      steps: 2,
      answer: "The finance team's shipments are archived: tool 544 did crate-7.",
    });
    const results = agent.history.find((message) => message.role === 'results')!.text;
    expect(results.startsWith(RESULTS_PREFIX)).toBe(true);
    expect(results).toContain('"name":"tool_544"');
    expect(results).toContain('tool 544 did crate-7');
    expect(results).toContain('tool_544(props: {');
  });
});

describe('a tool file with its own search tool', () => {
  it('keeps tools.search for that tool, and tools.describe for the catalog', async () => {
    using ownTools = toolFileDir(
      'mci-own-search-',
      `schemaVersion: '1.0'
tools:
  - name: search
    description: Searches the company wiki.
    inputSchema: { type: object, properties: { q: { type: string } }, required: [q] }
    execution: { type: text, text: 'wiki results for {{props.q}}' }
  - name: get_weather
    description: Current weather for a city.
    execution: { type: text, text: 'sunny' }
`,
    );
    await using own = await createServer({
      port: 0,
      file: ownTools.file,
      logLevel: 'silent',
      concurrency: 1,
    });
    await using ownClient = await connect(own.url);
    const { pid } = await ownClient.createProcess(`
      output((await tools.search({ q: 'holidays' })).content[0].text);
      output((await tools.describe('get_weather')).description);`);
    await ownClient.wait(pid);
    expect((await ownClient.getResult(pid)).outputs).toEqual([
      'wiki results for holidays',
      'Current weather for a city.',
    ]);
    const dts = await (await fetch(`${own.url}/tools.d.ts`)).text();
    expect(dts).toContain('  search(props: {');
    expect(dts).not.toContain('search(query: string');
    expect(dts).toContain('describe(name: string): Promise<ToolDescription>;');
  });
});
