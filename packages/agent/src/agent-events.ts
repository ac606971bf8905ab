import type { ChatStopReason, ChatUsage, ServerEvent } from '@mci/protocol';

/** A piece of the model's answer in step `step`, as it streamed (also written into stream `streamId`). */
export interface TokenEvent {
  type: 'token';
  step: number;
  streamId: string;
  text: string;
}

/**
 * A step ended: the model's whole answer, what it used, the processes its blocks created, and
 * `results`, the message sent back to the model (absent when the loop stops after this step).
 */
export interface StepEvent {
  type: 'step';
  step: number;
  streamId: string;
  text: string;
  usage?: ChatUsage;
  finishReason?: string;
  pids: number[];
  results?: string;
}

/** The turn ended: why, after how many steps, usage summed over its requests, and the last answer. */
export interface DoneEvent {
  type: 'done';
  reason: ChatStopReason;
  steps: number;
  usage: ChatUsage;
  answer: string;
}

/**
 * The turn ended with an error: `code` is the {@link ModelError} code (`MODEL_ERROR` with `status`,
 * `MODEL_UNREACHABLE`, ...) or `SERVER_ERROR` when running the blocks failed. Never holds a key.
 */
export interface ErrorEvent {
  type: 'error';
  code: string;
  message: string;
  provider?: string;
  model?: string;
  status?: number;
}

/**
 * What the loop reports, for a UI: the agent's own `token`, `step`, `done` and `error` events, and
 * the events of each step's MCI stream as the server sent them (`intent`, `process`, `output`, `log`,
 * `tool`, `stream.result`).
 */
export type AgentEvent = TokenEvent | StepEvent | DoneEvent | ErrorEvent | ServerEvent;
