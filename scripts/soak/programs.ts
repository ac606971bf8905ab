// The hostile program mix of `pnpm soak`.

/** A hostile program: its code and options, and how likely it is drawn (weight). */
export interface Program {
  name: string;
  weight: number;
  code: string;
  timeoutMs?: number;
  memoryLimitMb?: number;
  /** Refused at creation (CODE_TOO_LARGE), never a process. */
  refused?: boolean;
}

export const PROGRAMS: Program[] = [
  { name: 'plain', weight: 6, code: 'output(1 + 1)' },
  { name: 'tight-loop', weight: 3, code: 'while (true) {}', timeoutMs: 200 },
  { name: 'never-resolves', weight: 3, code: 'await new Promise(() => {})', timeoutMs: 300 },
  {
    name: 'memory-bomb',
    weight: 2,
    code: 'const hoard = []; while (true) hoard.push(new Array(1e6).fill(hoard.length))',
    memoryLimitMb: 32,
    timeoutMs: 3000,
  },
  { name: 'deep-recursion', weight: 2, code: 'const f = (n) => f(n + 1) + 1; f(0)' },
  { name: 'output-flood', weight: 1, code: 'for (let i = 0; i < 2e6; i++) output(0)', timeoutMs: 2000 },
  {
    name: 'console-flood',
    weight: 1,
    code: "for (let i = 0; i < 2e5; i++) console.log('x'.repeat(100), i)",
    timeoutMs: 2000,
  },
  { name: 'throw-null', weight: 1, code: 'throw null' },
  { name: 'throw-symbol', weight: 1, code: "throw Symbol('odd')" },
  {
    name: 'throw-hostile',
    weight: 1,
    code: 'throw { get message() { throw new Error("nested") }, toString() { throw 1 } }',
  },
  { name: 'throw-proxy', weight: 1, code: 'throw new Proxy({}, { get() { throw new Error("trap") } })' },
  {
    name: 'unhandled-rejection',
    weight: 2,
    code: "Promise.reject(new Error('nobody listens')); output('after')",
  },
  { name: 'huge-return', weight: 1, code: "return 'x'.repeat(8 * 1024 * 1024)" },
  { name: 'huge-object', weight: 1, code: 'return Array.from({ length: 3e5 }, (_, i) => ({ i, s: "abc" }))' },
  { name: 'oversize-code', weight: 1, code: `// ${'x'.repeat(200 * 1024)}\noutput(1)`, refused: true },
];
