// Secrets, in one run:
// 1. Redaction on the output path: a program's outputs of 1 KB (200 per run) and of 1 MB (4 per run)
//    through a whole server (sandbox, run controller, SQLite store), with 20 secrets against 0
//    (an empty redactor returns at once), interleaved on one sandbox pool. Target: under 10% on 1 KB.
// 2. The redactor alone: one 1 KB and one 1 MB text with 20 secrets.
// 3. Credential injection on `fetch`: 50 requests to a local service from a program, with a
//    credential rule matching every request against the same egress rule without credentials.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxPool, type SandboxPool } from '@mci/sandbox';
import { Redactor } from '@mci/schema';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createServer, type MciServer } from '../src/server.ts';

const ROUNDS = 12;
const SECRETS = Array.from({ length: 20 }, (_, i) => ({
  name: `SECRET_${i}`,
  value: `sk-bench-${i}-${(i * 7919).toString(36)}-0123456789abcdefghij`,
}));

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-redaction-'));
  const pool = createSandboxPool({ size: 1 });
  try {
    return [...(await outputPath(dir, pool)), ...redactorAlone(), ...(await injection(dir))];
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const tools = (dir: string) => {
  const file = join(dir, 'tools.yaml');
  writeFileSync(
    file,
    "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'hi' }\n",
  );
  return file;
};

/** Milliseconds of one blocking run of `code` on `server`. */
async function run(server: MciServer, code: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.url}/processes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, block: true, timeoutMs: 120_000 }),
  });
  const body = (await response.json()) as { status?: string; stderr?: string };
  if (body.status !== 'success') throw new Error(`bench program ${body.status}: ${body.stderr}`);
  return performance.now() - started;
}

async function outputPath(dir: string, pool: SandboxPool): Promise<BenchResult[]> {
  const file = tools(dir);
  const env = Object.fromEntries(SECRETS.map(({ name, value }) => [name, value]));
  const common = { port: 0, file, logLevel: 'silent' as const, pool, limits: { outputBytesPerSecond: 1e12 } };
  await using plain = await createServer({ ...common, db: join(dir, 'plain.db') });
  await using redacting = await createServer({
    ...common,
    db: join(dir, 'redacting.db'),
    env,
    secrets: SECRETS.map(({ name }) => name),
  });
  const cases = [
    {
      label: '1 KB',
      outputs: 200,
      code: "const s = 'x'.repeat(1024); for (let i = 0; i < 200; i++) output(s);",
    },
    {
      label: '1 MB',
      outputs: 4,
      code: "const s = 'x'.repeat(1_000_000); for (let i = 0; i < 4; i++) output(s);",
    },
  ];
  const results: BenchResult[] = [];
  for (const { label, outputs, code } of cases) {
    await run(plain, code);
    await run(redacting, code);
    const without: number[] = [];
    const withSecrets: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      without.push((await run(plain, code)) / outputs);
      withSecrets.push((await run(redacting, code)) / outputs);
    }
    results.push(
      compared(
        `output of ${label} through the server with 20 secrets (p50, per output)`,
        percentile(withSecrets, 50) * 1000,
        'us',
        { name: '0 secrets', value: percentile(without, 50) * 1000 },
        label === '1 KB' ? '< 1.10x' : undefined,
      ),
    );
  }
  return results;
}

function redactorAlone(): BenchResult[] {
  const redactor = new Redactor(SECRETS);
  const results: BenchResult[] = [];
  for (const [label, bytes] of [
    ['1 KB', 1024],
    ['1 MB', 1 << 20],
  ] as const) {
    const text = 'lorem ipsum dolor sit amet, '.repeat(Math.ceil(bytes / 28)).slice(0, bytes);
    const samples = sampleSync(() => redactor.redact(text), label === '1 KB' ? 20_000 : 20);
    results.push({
      name: `redact a ${label} text without secrets, 20 secrets known (p50)`,
      value: percentile(samples, 50) * 1000,
      unit: 'us',
    });
  }
  return results;
}

function sampleSync(fn: () => unknown, count: number): number[] {
  for (let i = 0; i < Math.min(count, 100); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  return samples;
}

async function injection(dir: string): Promise<BenchResult[]> {
  const service = createHttpServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const { port } = service.address() as { port: number };
  const file = tools(dir);
  // The pool's egress rule: a server's allowNet applies to the pool it makes itself.
  await using pool = createSandboxPool({ size: 1, allowNet: [`127.0.0.1:${port}`] });
  const common = { port: 0, file, logLevel: 'silent' as const, pool };
  await using plain = await createServer(common);
  await using injecting = await createServer({
    ...common,
    env: { SERVICE_TOKEN: SECRETS[0]!.value },
    credentials: [{ host: '127.0.0.1', headers: { Authorization: 'Bearer {{env.SERVICE_TOKEN}}' } }],
  });
  const code = `for (let i = 0; i < 50; i++) await (await fetch('http://127.0.0.1:${port}/x')).text();`;
  const without: number[] = [];
  const withCredentials: number[] = [];
  try {
    await run(plain, code);
    await run(injecting, code);
    for (let i = 0; i < ROUNDS; i++) {
      without.push((await run(plain, code)) / 50);
      withCredentials.push((await run(injecting, code)) / 50);
    }
  } finally {
    service.close();
  }
  return [
    compared(
      'sandbox fetch with an injected credential (p50, per request)',
      percentile(withCredentials, 50) * 1000,
      'us',
      { name: 'without', value: percentile(without, 50) * 1000 },
    ),
  ];
}
