import type { ProcessState } from '@mci/protocol';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../processes/process-store.ts';
import { PrincipalLoad } from './principal-load.ts';

/** The `process` event of `pid` of `owner` entering `state`. */
function processEvent(pid: number, owner: string, state: ProcessState): StoredEvent {
  return {
    event: {
      type: 'process',
      seq: pid,
      pid,
      state,
      status: state === 'idle' ? 'success' : null,
      lang: 'ts',
      createdAt: '2026-11-28T12:00:00.000Z',
      run: 1,
      runs: 1,
      timeoutMs: 30_000,
      memoryLimitMb: 128,
    },
    route: { owner, pid },
  };
}

describe('PrincipalLoad', () => {
  it("counts each principal's processes by the other nodes' last events, and drops those of this node's", () => {
    const load = new PrincipalLoad('n1', () => false);
    const see = (pid: number, owner: string, state: ProcessState, node: string) =>
      load.see([processEvent(pid, owner, state)], [node]);
    see(1, 'alice', 'queued', 'n2');
    see(2, 'alice', 'queued', 'n3');
    see(3, 'bob', 'queued', 'n2');
    expect([load.running('alice'), load.queued('alice'), load.queued('bob')]).toEqual([0, 2, 1]);
    expect(see(1, 'alice', 'running', 'n2')).toBe(false);
    expect([load.running('alice'), load.queued('alice')]).toEqual([1, 1]);
    // A run that ends elsewhere frees a slot of its principal.
    expect(see(1, 'alice', 'idle', 'n2')).toBe(true);
    expect(load.running('alice')).toBe(0);
    // Process 2 was handed to this node: its own events drop it (this node counts it itself).
    see(2, 'alice', 'running', 'n2');
    expect(see(2, 'alice', 'running', 'n1')).toBe(true);
    expect([load.running('alice'), load.queued('alice')]).toEqual([0, 0]);
  });

  it('does not count a process live on this node', () => {
    const local = new Set<number>();
    const load = new PrincipalLoad('n1', (pid) => local.has(pid));
    load.see([processEvent(7, 'alice', 'queued')], ['n2']);
    local.add(7);
    expect(load.queued('alice')).toBe(0);
    local.delete(7);
    expect(load.queued('alice')).toBe(1);
  });

  it('takes the rows read at start, but not those an event spoke of meanwhile', () => {
    const load = new PrincipalLoad('n1', () => false);
    load.seeding();
    load.see([processEvent(1, 'alice', 'idle')], ['n2']);
    load.seed([
      { pid: 1, owner: 'alice', state: 'running' },
      { pid: 2, owner: 'alice', state: 'running' },
      { pid: 3, owner: 'alice', state: 'queued' },
    ]);
    expect([load.running('alice'), load.queued('alice')]).toEqual([1, 1]);
  });
});
