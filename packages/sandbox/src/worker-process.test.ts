import { describe, expect, it } from 'vitest';
import { crashLines } from './worker-process.ts';

describe('crashLines', () => {
  it('keeps the line naming the failure and the last three lines', () => {
    const tail = [
      '<--- Last few GCs --->',
      'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
      '----- Native stack trace -----',
      ' 1: 0x1 node::OOMErrorHandler',
      ' 2: 0x2 v8::Utils::ReportOOMFailure',
      ' 3: 0x3 v8::internal::V8::FatalProcessOutOfMemory',
      '',
    ].join('\n');
    expect(crashLines(tail)).toBe(
      'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory | … | 1: 0x1 node::OOMErrorHandler | 2: 0x2 v8::Utils::ReportOOMFailure | 3: 0x3 v8::internal::V8::FatalProcessOutOfMemory',
    );
  });

  it('keeps the last three lines when none names the failure, and nothing when empty', () => {
    expect(crashLines('a\nb\nc\nd\n')).toBe('b | c | d');
    expect(crashLines('Check failed: x.\nb\n')).toBe('Check failed: x. | b');
    expect(crashLines('  \n')).toBe('');
  });
});
