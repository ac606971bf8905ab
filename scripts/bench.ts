// `pnpm bench`: runs every `bench/*.bench.ts` of the workspace, each in its own Node process,
// prints a table and writes `bench/results.json`. Benchmarks never fail CI: a failing bench file
// is reported and the others still run.
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { BenchResult } from '../bench/lib.ts';

const root = join(import.meta.dirname, '..');
const filter = process.argv[2];
const dirs = ['packages', 'apps'].flatMap((d) =>
  readdirSync(join(root, d)).map((name) => join(root, d, name, 'bench')),
);
const files = dirs
  .filter((d) => existsSync(d))
  .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.bench.ts')).map((f) => join(d, f)))
  .filter((f) => !filter || f.includes(filter));

const all: Array<BenchResult & { file: string }> = [];
for (const file of files) {
  const rel = relative(root, file);
  process.stderr.write(`bench ${rel}\n`);
  const child = spawnSync(
    process.execPath,
    ['--conditions=@mci/source', '--no-node-snapshot', '--expose-gc', join(root, 'scripts/bench-one.ts'), file],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 },
  );
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !line.startsWith('[')) {
    process.stderr.write(`  failed (exit ${child.status}): ${child.stdout.slice(-2000)}\n`);
    continue;
  }
  for (const r of JSON.parse(line) as BenchResult[]) all.push({ ...r, file: rel });
}

const fmt = (n: number | undefined) =>
  n === undefined ? '' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3);
console.table(
  all.map((r) => ({
    name: r.name,
    value: `${fmt(r.value)} ${r.unit}`,
    baseline: r.baseline ? `${fmt(r.baseline.value)} (${r.baseline.name})` : '',
    ratio: fmt(r.ratio),
    target: r.target ?? '',
  })),
);
writeFileSync(join(root, 'bench/results.json'), `${JSON.stringify(all, null, 2)}\n`);
process.stderr.write(`wrote bench/results.json (${all.length} results)\n`);
