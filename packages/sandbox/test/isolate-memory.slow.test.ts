import { expect, it } from 'vitest';
import { createSandboxPool } from '../src/index.ts';

// One trust domain's isolate serves run after run (a fresh context each): what the runs allocate and
// drop must not pile up. 10,000 runs that each allocate about 5 MB of heap and drop it.
it('keeps the heap of a domain isolate bounded over 10,000 runs that each allocate 5 MB', {
  timeout: 600_000,
}, async () => {
  await using pool = createSandboxPool({ size: 1, isolation: 'context' });
  // 5,120 strings of 1,000 characters: about 5 MB of heap, dropped when the run ends.
  const code = "const a = []; for (let i = 0; i < 5120; i++) a.push('y'.repeat(1000) + i); output(a.length);";
  const isolates = new Set<string>();
  let maxHeap = 0;
  for (let i = 0; i < 10_000; i++) {
    const result = await pool.execute({ code, lang: 'js', trustDomain: 'alice', memoryLimitMb: 128 }).result;
    expect(result.status).toBe('success');
    isolates.add(result.isolate!.id);
    maxHeap = Math.max(maxHeap, result.heapUsedBytes);
  }
  console.log(JSON.stringify({ isolates: isolates.size, maxHeapMb: maxHeap / 1024 / 1024 }));
  // An isolate is retired past half the memory limit (64 MB), measured after each run.
  expect(maxHeap).toBeLessThan(64 * 1024 * 1024 + 6 * 1024 * 1024);
  // Reused: far fewer isolates than runs (200 runs each at most).
  expect(isolates.size).toBeLessThan(1_000);
});
