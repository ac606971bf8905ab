import { withoutMediaData } from './media-outputs.ts';
import { encodeOutputValue } from './output-value.ts';
import type { CheckDiagnostic, ProcessResult } from './snapshot.ts';
import { utf8Head, utf8Length, utf8Tail } from './utf8.ts';

/** The default cap of the response pipe, in UTF-8 bytes (16 KiB). */
export const DEFAULT_RESPONSE_PIPE_BYTES = 16 * 1024;

/** The smallest accepted `maxBytes` of {@link formatResults}. */
export const MIN_RESPONSE_PIPE_BYTES = 128;

/** An exec block that was not run (unsupported language, unclosed fence), listed by {@link formatResults}. */
export interface RejectedBlock {
  /** The intent index of the block in its stream. */
  index: number;
  lang: string;
  reason: string;
}

/** Options of {@link formatResults}. */
export interface FormatResultsOptions {
  /** Cap of the whole text in UTF-8 bytes, truncation marker included. @default 16384 */
  maxBytes?: number;
  /** Blocks that were not run, listed in index order among the processes. */
  rejected?: RejectedBlock[];
}

/** Longest error message kept in a block's header lines, in bytes (the stack is never shown). */
const MAX_ERROR_BYTES = 1024;

/** Check warnings listed per block; the rest are counted. */
const MAX_WARNINGS = 5;

/** A check finding in the short form a model acts on: `line 3: tools.gret does not exist. ...`. */
const checkLine = (diagnostic: CheckDiagnostic) => `line ${diagnostic.line}: ${oneLine(diagnostic.message)}`;

interface Block {
  index: number;
  /** Lines always shown (block header, error, notes). */
  head: string;
  /** Outputs and logs, shown in full when they fit, else cut to a share of the budget. */
  sections: Section[];
}

type Section =
  | { kind: 'outputs'; items: string[] }
  | { kind: 'log'; name: 'stdout' | 'stderr'; text: string };

/**
 * Renders process results as the **response pipe**: compact, deterministic plain text a model reads
 * to learn what its exec blocks did. Per block, in index order: a header line with the block index,
 * pid and status (`block 0 (pid 7): success`), the error with its line and column (for a program the
 * check stopped, one `line N: message` per finding), up to five check warnings of a run that did not
 * succeed (`warning: line N: message`), each output as one line of JSON, and the tail of stdout and stderr. The same input always gives the same text
 * (durations are left out on purpose).
 *
 * The text never exceeds `maxBytes` UTF-8 bytes. When everything does not fit, every block keeps its
 * header and error, outputs and logs share what is left (small ones in full, the biggest cut: outputs
 * keep their head, logs their tail, each cut saying so), and the text ends with the marker line
 * `[results truncated to fit N bytes]`.
 *
 * The block index is `metadata.intentIndex` when present, else the position in `results`.
 *
 * What a program wrote cannot pass for the server's lines: outputs are one line of JSON each, every
 * line of stdout, stderr and of a multi-line error message is quoted with a leading `| `, and an
 * error name is kept on one line. So every line that starts with `block ` is a block header.
 *
 * @throws RangeError when `maxBytes` is not an integer >= {@link MIN_RESPONSE_PIPE_BYTES}.
 */
export function formatResults(results: readonly ProcessResult[], options: FormatResultsOptions = {}): string {
  const maxBytes = options.maxBytes ?? DEFAULT_RESPONSE_PIPE_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_RESPONSE_PIPE_BYTES) {
    throw new RangeError(`maxBytes must be an integer >= ${MIN_RESPONSE_PIPE_BYTES}, got ${maxBytes}`);
  }
  const blocks = [...results.map(toBlock), ...(options.rejected ?? []).map(rejectedBlock)];
  // Stable sort: equal indexes keep their input order.
  blocks.sort((a, b) => a.index - b.index);
  if (blocks.length === 0) return 'no exec blocks were run';

  const full = blocks.map((block) => [block.head, ...block.sections.map(renderFull)].join('')).join('\n\n');
  if (utf8Length(full) <= maxBytes) return full;

  const marker = `[results truncated to fit ${maxBytes} bytes]`;
  const budget = maxBytes - utf8Length(marker) - 1;
  const heads = blocks.map((block) => block.head);
  const headBytes = heads.reduce((sum, head) => sum + utf8Length(head), 0) + 2 * (blocks.length - 1);
  if (headBytes > budget) {
    // Even the headers do not fit: keep whole lines from the start.
    const text = utf8Head(heads.join('\n\n'), budget);
    const cut = text.lastIndexOf('\n');
    return `${cut > 0 ? text.slice(0, cut) : text}\n${marker}`;
  }

  const sections = blocks.flatMap((block) => block.sections);
  const shares = fairShares(
    sections.map((section) => utf8Length(renderFull(section))),
    budget - headBytes,
  );
  let next = 0;
  const rendered = blocks.map((block) => {
    const parts = [block.head];
    for (const section of block.sections) parts.push(renderWithin(section, shares[next++] ?? 0));
    return parts.join('');
  });
  return `${rendered.join('\n\n')}\n${marker}`;
}

function toBlock(result: ProcessResult, position: number): Block {
  const index = result.metadata?.intentIndex ?? position;
  const lines = [`block ${index} (pid ${result.pid}): ${describeStatus(result)}`];
  if (result.error) {
    const where =
      result.error.line === undefined
        ? ''
        : ` (line ${result.error.line}${result.error.column === undefined ? '' : `, column ${result.error.column}`})`;
    const message =
      utf8Length(result.error.message) > MAX_ERROR_BYTES
        ? `${utf8Head(result.error.message, MAX_ERROR_BYTES)}…`
        : result.error.message;
    const [first = '', ...rest] = message.split(LINE_BREAK);
    lines.push(`error${where}: ${oneLine(result.error.name)}: ${escapeControls(first)}`);
    if (rest.length > 0) lines.push(quote(rest.join('\n')));
    for (const diagnostic of result.error.diagnostics ?? []) lines.push(checkLine(diagnostic));
  }
  // Warnings may explain a failure; beside a success they would only cost the model tokens.
  const warnings = result.status === 'success' ? [] : (result.warnings ?? []);
  for (const warning of warnings.slice(0, MAX_WARNINGS)) lines.push(`warning: ${checkLine(warning)}`);
  if (warnings.length > MAX_WARNINGS) lines.push(`warning: and ${warnings.length - MAX_WARNINGS} more`);
  if (result.truncated) lines.push('note: the sandbox dropped outputs or logs past its size limits');
  const sections: Section[] = [];
  if (result.outputs.length > 0)
    sections.push({ kind: 'outputs', items: result.outputs.map((value) => toJson(withoutMediaData(value))) });
  if (result.stdout !== '') sections.push({ kind: 'log', name: 'stdout', text: trimNewline(result.stdout) });
  const stderr = programStderr(result);
  if (stderr !== '') sections.push({ kind: 'log', name: 'stderr', text: trimNewline(stderr) });
  if (sections.length === 0 && result.status === 'success') lines[0] += ' (no output)';
  return { index, head: lines.join('\n'), sections };
}

/**
 * stderr without the failure text the sandbox appends when a run does not succeed (`Name: message`
 * and the program's frames, `timeout: ...` or `canceled: ...`): the block's header and error lines
 * already say it.
 */
function programStderr(result: ProcessResult): string {
  const { stderr, error } = result;
  switch (result.status) {
    case 'timeout':
      return withoutSuffix(stderr, `timeout: the run exceeded ${result.timeoutMs} ms\n`);
    case 'canceled':
      return withoutSuffix(stderr, 'canceled: killed by a signal\n');
    case 'failed': {
      if (!error) return stderr;
      const head = `${error.name}: ${error.message}\n`;
      const at = stderr.lastIndexOf(head);
      return at >= 0 && FRAMES_ONLY.test(stderr.slice(at + head.length)) ? stderr.slice(0, at) : stderr;
    }
    default:
      return stderr;
  }
}

/** Nothing but stack frame lines, as the sandbox writes them after an uncaught error. */
const FRAMES_ONLY = /^(?: {4}at [^\n]*\n)*$/;

const withoutSuffix = (text: string, suffix: string) =>
  text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;

function rejectedBlock(rejected: RejectedBlock): Block {
  return {
    index: rejected.index,
    head: `block ${rejected.index} (${rejected.lang}): not run: ${rejected.reason}`,
    sections: [],
  };
}

function describeStatus(result: ProcessResult): string {
  switch (result.status) {
    case 'timeout':
      return `timeout (ran past ${result.timeoutMs} ms)`;
    case null:
      return result.state === 'idle' ? 'not run' : `${result.state} (not finished)`;
    default:
      return result.status;
  }
}

const trimNewline = (text: string) => (text.endsWith('\n') ? text.slice(0, -1) : text);

/**
 * Line breaks as a reader of the text may see them: CommonMark's (`\n`, `\r\n`, `\r`), and those of
 * Unicode and terminals (vertical tab, form feed, NEL, line and paragraph separators).
 */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;

/** Control characters other than tab and line breaks (C0, DEL, C1): written as `\u001b`. */
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/g;

/** `text` with its control characters written as escapes, so none reaches a reader's terminal raw. */
const escapeControls = (text: string) =>
  text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Program text, every line prefixed with `| ` so it cannot pass for a line of the server. */
const quote = (text: string) =>
  text
    .split(LINE_BREAK)
    .map((line) => `| ${escapeControls(line)}`)
    .join('\n');

/** A program-chosen name on one line. */
const oneLine = (text: string) =>
  escapeControls(text.replace(/(?:\r\n|[\n\r\v\f\u0085\u2028\u2029])+/g, ' '));

/**
 * JSON of an output value, one line. Output values travel in the encoding of
 * {@link encodeOutputValue}, which is JSON already and is written as it is; any other value (a raw
 * `10n` or Map from a caller of its own) is encoded first, so this never throws.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(isJson(value) ? value : encodeOutputValue(value));
}

/** True when `value` is JSON data as it is: no undefined, bigint, non-finite or -0 number, Map..., or repeat. */
function isJson(value: unknown, seen = new Set<object>()): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, seen));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((item) => isJson(item, seen));
}

function renderFull(section: Section): string {
  if (section.kind === 'outputs') return section.items.map((item) => `\noutput: ${item}`).join('');
  return `\n${section.name}:\n${quote(section.text)}`;
}

/** Renders a section in at most `bytes` UTF-8 bytes (possibly nothing, when not even a marker fits). */
function renderWithin(section: Section, bytes: number): string {
  const full = renderFull(section);
  const size = utf8Length(full);
  if (size <= bytes) return full;
  if (section.kind === 'log') {
    const quoted = quote(section.text);
    const header = `\n${section.name} (last ${size} of ${utf8Length(section.text)} bytes):\n`;
    const room = bytes - utf8Length(header);
    if (room >= 16) {
      // The cut may fall inside a line: that partial line gets its `| ` too (2 bytes kept for it).
      let tail = utf8Tail(quoted, room - 2);
      if (!tail.startsWith('| ')) tail = `| ${tail}`;
      // The header above was sized with an upper bound; write the exact count now (never longer).
      return `\n${section.name} (last ${utf8Length(tail)} of ${utf8Length(section.text)} bytes):\n${tail}`;
    }
    const omitted = `\n[${section.name} omitted: ${utf8Length(section.text)} bytes]`;
    return utf8Length(omitted) <= bytes ? omitted : '';
  }
  const parts: string[] = [];
  let used = 0;
  for (let i = 0; i < section.items.length; i++) {
    const line = `\noutput: ${section.items[i]}`;
    const rest = section.items.length - i;
    const restMarker = `\n[${rest} more output${rest === 1 ? '' : 's'} omitted]`;
    const lineBytes = utf8Length(line);
    // The last line needs no room for a marker after it; any other must leave room for one.
    const reserve = i === section.items.length - 1 ? 0 : utf8Length(restMarker);
    if (used + lineBytes + reserve <= bytes) {
      parts.push(line);
      used += lineBytes;
      continue;
    }
    const cutMarker = ` … [cut: the JSON has ${utf8Length(section.items[i]!)} bytes]`;
    const room = bytes - used - utf8Length(cutMarker) - utf8Length(restMarker);
    if (room >= 32) {
      const head = utf8Head(line, room);
      parts.push(`${head}${cutMarker}`);
      used += utf8Length(head) + utf8Length(cutMarker);
      const after = rest - 1;
      if (after > 0) parts.push(`\n[${after} more output${after === 1 ? '' : 's'} omitted]`);
    } else if (used + utf8Length(restMarker) <= bytes) parts.push(restMarker);
    break;
  }
  return parts.join('');
}

/**
 * Splits `budget` among items of the given sizes, max-min fair: items smaller than an equal share get
 * their size, the rest share what is left equally (deterministic, in input order).
 */
function fairShares(sizes: number[], budget: number): number[] {
  const shares = new Array<number>(sizes.length).fill(0);
  const order = sizes.map((size, i) => ({ size, i })).sort((a, b) => a.size - b.size || a.i - b.i);
  let left = Math.max(0, budget);
  order.forEach(({ size, i }, rank) => {
    const share = Math.min(size, Math.floor(left / (order.length - rank)));
    shares[i] = share;
    left -= share;
  });
  return shares;
}
