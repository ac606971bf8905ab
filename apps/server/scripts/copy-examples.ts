// Part of `pnpm build`: copies the example tool file with its toolsets and data into
// dist/examples/, so the built package runs `mci` without a tool file of its own.
import { cpSync, rmSync } from 'node:fs';

const from = new URL('../../../examples/', import.meta.url);
const to = new URL('../dist/examples/', import.meta.url);
rmSync(to, { recursive: true, force: true });
for (const entry of ['mci.yaml', 'mci', 'data']) {
  cpSync(new URL(entry, from), new URL(entry, to), { recursive: true });
}
