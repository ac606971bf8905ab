/** Secret values shorter than this are refused: redacting them would hit common words. */
export const MIN_SECRET_LENGTH = 8;

/**
 * Any run of this many consecutive characters of a secret value (or of one of its encodings) is
 * redacted, so a key echoed without its prefix, or split across two log lines, is still caught.
 */
export const MIN_REDACTED_RUN = 12;

/** A secret value and the name it is redacted as (`[redacted:NAME]`). */
export interface Secret {
  /** Usually the environment variable the value comes from (`GITHUB_TOKEN`). */
  name: string;
  /** At least {@link MIN_SECRET_LENGTH} characters. */
  value: string;
}

/** A value was refused as a secret (too short to be told apart from ordinary text). */
export class SecretError extends Error {
  override name = 'SecretError';
}

/** One form of a secret: the value, or an encoding of it that a program could print. */
interface Form {
  text: string;
  name: string;
}

/** Where a window of {@link MIN_REDACTED_RUN} characters occurs in a form. */
interface Occurrence {
  form: Form;
  offset: number;
}

const HASH_BASE = 31;
/** HASH_BASE ** (MIN_REDACTED_RUN - 1), mod 2^32. */
const HASH_TOP = (() => {
  let power = 1;
  for (let i = 1; i < MIN_REDACTED_RUN; i++) power = Math.imul(power, HASH_BASE);
  return power;
})();
const FILTER_BITS = 20;

/**
 * The forms a program could print a secret in: the value, its JSON string escape, its URL encoding,
 * and the parts of its base64 (and base64url) encoding that do not depend on the bytes around it (one
 * per alignment of the value in the encoder's 3-byte groups).
 */
function formsOf({ name, value }: Secret): Form[] {
  const texts = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
  const bytes = Buffer.from(value, 'utf8');
  for (let offset = 0; offset < 3; offset++) {
    const whole = Math.floor((bytes.length - offset) / 3) * 3;
    if (whole < 6) continue;
    const core = bytes.subarray(offset, offset + whole).toString('base64');
    texts.add(core);
    texts.add(core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...texts].map((text) => ({ text, name }));
}

/**
 * Replaces secret values in text by `[redacted:NAME]` (docs/security.md): the whole value, any run of
 * {@link MIN_REDACTED_RUN} or more of its characters, and the same for its JSON, URL and base64
 * encodings. Windows of {@link MIN_REDACTED_RUN} characters are found with a rolling hash, so a scan
 * costs one pass over the text whatever the number of secrets; a text without a secret is returned
 * as it is.
 */
export class Redactor {
  #secrets: Secret[] = [];
  /** Forms shorter than a window, matched whole. */
  #short: Form[] = [];
  #windows = new Map<number, Occurrence[]>();
  /** One bit per low {@link FILTER_BITS} bits of a window hash: most positions stop here. */
  #filter = new Uint8Array(1 << (FILTER_BITS - 3));

  /** @throws SecretError when a value is shorter than {@link MIN_SECRET_LENGTH} (its name in the message). */
  constructor(secrets: readonly Secret[] = []) {
    this.add(secrets);
  }

  /** The secrets, longest value first. */
  get secrets(): readonly Secret[] {
    return this.#secrets;
  }

  /**
   * Adds secrets (a value already known keeps its first name).
   * @throws SecretError when a value is shorter than {@link MIN_SECRET_LENGTH}.
   */
  add(secrets: readonly Secret[]): void {
    for (const secret of secrets) {
      if (secret.value.length < MIN_SECRET_LENGTH)
        throw new SecretError(
          `${secret.name} is shorter than ${MIN_SECRET_LENGTH} characters; a secret that short cannot be told apart from ordinary text`,
        );
      if (this.#secrets.some(({ value }) => value === secret.value)) continue;
      this.#secrets.push({ name: secret.name, value: secret.value });
      for (const form of formsOf(secret)) this.#index(form);
    }
    this.#secrets.sort((a, b) => b.value.length - a.value.length);
    this.#short.sort((a, b) => b.text.length - a.text.length);
  }

  /** Whether there is anything to redact. */
  get empty(): boolean {
    return this.#secrets.length === 0;
  }

  /** `text` with every secret (and every run of {@link MIN_REDACTED_RUN} of its characters) replaced. */
  redact(text: string): string {
    if (this.#secrets.length === 0) return text;
    let out = this.#redactRuns(text);
    for (const { text: form, name } of this.#short)
      if (out.includes(form)) out = out.replaceAll(form, `[redacted:${name}]`);
    return out;
  }

  /**
   * A JSON-like value with every string (and object key) redacted; the same object when nothing
   * changed.
   */
  redactValue<T>(value: T): T {
    if (this.#secrets.length === 0) return value;
    return this.#walk(value) as T;
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = this.#walk(value[i]);
        if (item === value[i]) continue;
        copy ??= [...value];
        copy[i] = item;
      }
      return copy ?? value;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
      return value;
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const newKey = this.redact(key);
      const newItem = this.#walk(item);
      if (newKey !== key || newItem !== item) {
        copy ??= { ...value };
        if (newKey !== key) delete copy[key];
        copy[newKey] = newItem;
      }
    }
    return copy ?? value;
  }

  #index(form: Form): void {
    const { text } = form;
    if (text.length < MIN_REDACTED_RUN) {
      if (!this.#short.some((known) => known.text === text)) this.#short.push(form);
      return;
    }
    let hash = hashAt(text, 0);
    for (let offset = 0; ; offset++) {
      const list = this.#windows.get(hash);
      if (list) list.push({ form, offset });
      else this.#windows.set(hash, [{ form, offset }]);
      const bit = hash & ((1 << FILTER_BITS) - 1);
      this.#filter[bit >>> 3]! |= 1 << (bit & 7);
      if (offset + MIN_REDACTED_RUN >= text.length) break;
      hash = roll(hash, text.charCodeAt(offset), text.charCodeAt(offset + MIN_REDACTED_RUN));
    }
  }

  #redactRuns(text: string): string {
    const end = text.length - MIN_REDACTED_RUN;
    if (end < 0) return text;
    let parts: string[] | undefined;
    let copied = 0;
    let i = 0;
    let hash = hashAt(text, 0);
    while (i <= end) {
      const bit = hash & ((1 << FILTER_BITS) - 1);
      if ((this.#filter[bit >>> 3]! & (1 << (bit & 7))) !== 0) {
        const match = this.#longestAt(text, i, hash);
        if (match) {
          parts ??= [];
          parts.push(text.slice(copied, i), `[redacted:${match.name}]`);
          i += match.length;
          copied = i;
          if (i > end) break;
          hash = hashAt(text, i);
          continue;
        }
      }
      if (i === end) break;
      hash = roll(hash, text.charCodeAt(i), text.charCodeAt(i + MIN_REDACTED_RUN));
      i++;
    }
    if (!parts) return text;
    parts.push(text.slice(copied));
    return parts.join('');
  }

  /** The longest run of a secret form that starts at `start` of `text` (at least a window long). */
  #longestAt(text: string, start: number, hash: number): { name: string; length: number } | undefined {
    const occurrences = this.#windows.get(hash);
    if (!occurrences) return undefined;
    let best: { name: string; length: number } | undefined;
    for (const { form, offset } of occurrences) {
      let length = 0;
      const most = Math.min(form.text.length - offset, text.length - start);
      while (length < most && text.charCodeAt(start + length) === form.text.charCodeAt(offset + length))
        length++;
      if (length >= MIN_REDACTED_RUN && (!best || length > best.length)) best = { name: form.name, length };
    }
    return best;
  }
}

function hashAt(text: string, start: number): number {
  let hash = 0;
  for (let i = start; i < start + MIN_REDACTED_RUN; i++)
    hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

function roll(hash: number, out: number, into: number): number {
  return (Math.imul((hash - Math.imul(out, HASH_TOP)) | 0, HASH_BASE) + into) | 0;
}

/** Query parameters whose values are credentials (`?api_key=`, `?token=`, `?sig=`). */
const CREDENTIAL_PARAM =
  /^(?:api[-_]?key|key|token|access[-_]?token|auth|password|secret|sig|signature|client[-_]?secret)$/i;

/**
 * The credentials written in a URL: its password (`user:pass@`) and the values of query parameters
 * named like keys (`api_key`, `token`, `sig`, ...), each named `NAME` (the setting or variable the
 * URL comes from). Values shorter than {@link MIN_SECRET_LENGTH} are left out: {@link withoutCredentials}
 * hides them in messages. Not a URL: none.
 */
export function secretsOfUrl(url: string, name: string): Secret[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const values = [decodeURIComponent(parsed.password)];
  for (const [param, value] of parsed.searchParams) if (CREDENTIAL_PARAM.test(param)) values.push(value);
  return values.filter((value) => value.length >= MIN_SECRET_LENGTH).map((value) => ({ name, value }));
}

/** `url` without its password and credential query values (`***` in their place), for messages. */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const params = [...parsed.searchParams.keys()].filter((param) => CREDENTIAL_PARAM.test(param));
  if (!parsed.password && params.length === 0) return url;
  if (parsed.password) parsed.password = '***';
  for (const param of params) parsed.searchParams.set(param, '***');
  return parsed.href;
}
