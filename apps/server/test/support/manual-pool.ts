import type { Execution, ExecutionRequest, ExecutionResult, SandboxEvent } from '@mci/sandbox';
import type { ExecutionPool, SandboxEventBody } from '../../src/processes/process-manager-types.ts';

/** One execution of the manual pool, driven by the test. */
export interface ManualExecution extends Execution {
  readonly request: ExecutionRequest;
  readonly killed: boolean;
  readonly settled: boolean;
  /** Streams an event as the sandbox would (numbered from 1). */
  emit(event: SandboxEventBody): void;
  /** Ends the execution with this outcome (outputs/logs default to what was emitted). */
  finish(result?: Partial<ExecutionResult>): void;
}

/**
 * An in-memory stand-in for the sandbox pool, for fast and deterministic tests of the scheduling
 * logic: every `execute()` is recorded and ends only when the test says so; `kill()` ends it
 * `canceled` on the next microtask, as the real pool does within milliseconds.
 */
export class ManualPool implements ExecutionPool {
  readonly size: number;
  readonly executions: ManualExecution[] = [];
  readonly #started: Array<() => void> = [];

  constructor(size: number) {
    this.size = size;
  }

  /** Executions started and not yet settled. */
  get active(): ManualExecution[] {
    return this.executions.filter((execution) => !execution.settled);
  }

  /** Resolves once `count` executions have been started in total. */
  async started(count: number): Promise<ManualExecution> {
    while (this.executions.length < count) await new Promise<void>((resolve) => this.#started.push(resolve));
    return this.executions[count - 1]!;
  }

  execute(request: ExecutionRequest): Execution {
    let resolve!: (result: ExecutionResult) => void;
    const result = new Promise<ExecutionResult>((r) => {
      resolve = r;
    });
    const outputs: unknown[] = [];
    const logs = { stdout: '', stderr: '' };
    const state = { killed: false, settled: false, seq: 0 };
    const settle = (outcome: Partial<ExecutionResult>) => {
      if (state.settled) return;
      state.settled = true;
      resolve({
        status: 'success',
        outputs,
        ...logs,
        durationMs: 1,
        cpuTimeMs: 1,
        heapUsedBytes: 0,
        ...outcome,
      });
    };
    const execution: ManualExecution = {
      request,
      result,
      get killed() {
        return state.killed;
      },
      get settled() {
        return state.settled;
      },
      kill() {
        if (state.settled) return;
        state.killed = true;
        queueMicrotask(() => settle({ status: 'canceled', error: { name: 'Error', message: 'killed' } }));
      },
      emit(event) {
        if (event.type === 'output') outputs.push(event.value);
        if (event.type === 'log') logs[event.stream] += event.text;
        request.onEvent?.({ ...event, seq: ++state.seq } as SandboxEvent);
      },
      finish: (outcome = {}) => settle(outcome),
    };
    this.executions.push(execution);
    for (const wake of this.#started.splice(0)) wake();
    return execution;
  }
}
