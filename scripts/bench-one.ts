// Runs one bench file (its default export) and prints its results as one JSON line on stdout.
import { pathToFileURL } from 'node:url';
import type { BenchFile } from '../bench/lib.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: bench-one.ts FILE');
const mod = (await import(pathToFileURL(file).href)) as { default: BenchFile };
const results = await mod.default();
process.stdout.write(`\n${JSON.stringify(results)}\n`);
process.exit(0);
