import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutputCollector } from './output-collector.ts';

describe('OutputCollector', () => {
  it('keeps exactly the first capBytes bytes and counts them all, for every chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }),
        fc.nat(300),
        async (chunks, cap) => {
          const stream = new PassThrough();
          const collector = new OutputCollector(stream, cap);
          const ended = new Promise((resolve) => stream.on('end', resolve));
          for (const chunk of chunks) stream.write(Buffer.from(chunk));
          stream.end();
          await ended;
          const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
          expect(collector.totalBytes).toBe(all.length);
          expect(collector.truncated).toBe(all.length > cap);
          expect(
            Buffer.from(collector.text(), 'utf8').equals(
              Buffer.from(all.subarray(0, cap).toString('utf8'), 'utf8'),
            ),
          ).toBe(true);
        },
      ),
    );
  });
});
