import type { z } from 'zod';
import {
  CLIENT_MESSAGE_TYPES,
  type ClientMessage,
  ClientMessageSchema,
  type RequestId,
  RequestIdSchema,
} from './messages.ts';
import { describeValidationIssues, formatZodIssues } from './validation-issues.ts';

/** Why a frame is not a valid request: `code` is `BAD_JSON`, `UNKNOWN_TYPE` or `VALIDATION`. */
export interface ClientMessageProblem {
  code: 'BAD_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION';
  message: string;
  /** The bad field (`pid`, `metadata.attributes.timeout`, `items[2].name`). */
  path?: string;
  /** The request's id, when the frame had a readable one (so the error reply can echo it). */
  id?: RequestId;
}

/** The outcome of {@link parseClientMessage}. */
export type ParsedClientMessage =
  | { ok: true; message: ClientMessage }
  | { ok: false; problem: ClientMessageProblem };

/**
 * Reads one text frame as a client request: JSON, an object, a known `type`, then the schema of that
 * type. Never throws; every failure is a {@link ClientMessageProblem} naming what and where.
 */
export function parseClientMessage(frame: string): ParsedClientMessage {
  let data: unknown;
  try {
    data = JSON.parse(frame);
  } catch (error) {
    return fail({ code: 'BAD_JSON', message: `frame is not JSON: ${(error as Error).message}` });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail({ code: 'VALIDATION', message: 'a message must be a JSON object with a "type"' });
  }
  const record = data as Record<string, unknown>;
  const parsedId = RequestIdSchema.safeParse(record.id);
  const id = parsedId.success ? parsedId.data : undefined;
  const withId = (problem: ClientMessageProblem) => fail(id === undefined ? problem : { ...problem, id });
  if (typeof record.type !== 'string') {
    return withId({ code: 'VALIDATION', message: 'type: a message needs a string "type"', path: 'type' });
  }
  if (!(CLIENT_MESSAGE_TYPES as readonly string[]).includes(record.type)) {
    return withId({
      code: 'UNKNOWN_TYPE',
      message: `unknown message type ${JSON.stringify(record.type)}; expected one of ${CLIENT_MESSAGE_TYPES.join(', ')}`,
      path: 'type',
    });
  }
  const result = ClientMessageSchema.safeParse(data);
  if (result.success) return { ok: true, message: result.data };
  return withId(describeIssues(result.error.issues));
}

/**
 * Turns zod issues into one problem: the first issue's path, every issue (up to 5) in the message,
 * in the wording and path notation (`tools[2].name`) of {@link formatZodIssues}.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): ClientMessageProblem {
  const list = formatZodIssues(issues);
  const path = list[0]?.path;
  return { code: 'VALIDATION', message: describeValidationIssues(list), ...(path ? { path } : {}) };
}

function fail(problem: ClientMessageProblem): ParsedClientMessage {
  return { ok: false, problem };
}
