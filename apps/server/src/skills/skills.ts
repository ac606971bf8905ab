import type { Checker } from '@mci/check';
import type { Page, PageRequest } from '@mci/protocol';
import type { SkillHost } from '@mci/sandbox';
import { PropsValidator } from '@mci/tools';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { parseOrThrow } from '../http/validate.ts';
import { pageBounds, toPage } from '../paging/cursor.ts';
import type { Principal } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import { renderSkillDeclarations } from './skill-declarations.ts';
import { SkillCheckFailed } from './skill-errors.ts';
import { skillNameProblem } from './skill-name.ts';
import type { SkillStore, SkillVersion } from './skill-store.ts';

/** Most skills one principal may have. */
export const MAX_SKILLS = 500;
/** Longest skill description, in characters. */
export const MAX_SKILL_DESCRIPTION = 2000;

/** What a save asks for: `POST /skills`, `skills.save(...)`, `mci skill save`. */
export const SkillSaveSchema = z.strictObject({
  name: z.string().superRefine((name, ctx) => {
    const problem = skillNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  description: z.string().min(1).max(MAX_SKILL_DESCRIPTION),
  code: z.string().min(1),
  inputSchema: z
    .looseObject({ type: z.literal('object') })
    .optional()
    .describe('a JSON Schema of an object'),
});
export type SkillSave = z.infer<typeof SkillSaveSchema>;

/** A skill as clients see it (without the compiled body). */
export type SkillInfo = Omit<SkillVersion, 'js'>;

/** The skills a run starts with: what its sandbox calls, and their declarations for the check. */
export interface RunSkills {
  /** Name -> the compiled body, for `SkillHost.sources`. */
  sources: Record<string, string>;
  /** `interface Skills { ... }` of these skills ('' without any). */
  declarations: string;
  /** The input schemas by name. */
  schemas: Map<string, Record<string, unknown>>;
}

/** Options of {@link Skills}. */
export interface SkillsOptions {
  store: SkillStore;
  /** The checker skills are checked with at save (created on first use by the caller). */
  checker: () => Pick<Checker, 'checkSkill'>;
  /** Largest skill code, in bytes (the server's `maxCodeBytes`). */
  maxCodeBytes: number;
  /**
   * How long a principal's skills read for runs are reused, ms: a save on this server is seen by
   * the next run at once; one on another node of a cluster within this time. @default 2000
   */
  cacheMs?: number;
}

/**
 * The saved skills of every principal (docs/sessions.md, "Skills"): saving (checked, each save a new
 * version), reading, listing, deleting, and what a run gets of them. A principal sees its own only.
 */
export class Skills {
  readonly #store: SkillStore;
  readonly #checker: () => Pick<Checker, 'checkSkill'>;
  readonly #maxCodeBytes: number;
  readonly #validator = new PropsValidator();
  readonly #runSkills: LRUCache<string, RunSkills>;

  constructor(options: SkillsOptions) {
    this.#store = options.store;
    this.#checker = options.checker;
    this.#maxCodeBytes = options.maxCodeBytes;
    this.#runSkills = new LRUCache({ max: 1000, ttl: options.cacheMs ?? 2000 });
  }

  /**
   * Saves the next version of a skill of `principal` (`createdBy`: the pid of the program saving it).
   * `body` is checked here (any shape).
   * @throws ServerError `VALIDATION` (with `path`) for a bad field, {@link SkillCheckFailed} when the
   *   code does not compile, `CODE_TOO_LARGE`, `LIMIT_EXCEEDED` past {@link MAX_SKILLS} skills.
   */
  async save(principal: Principal, body: unknown, createdBy?: number): Promise<SkillInfo> {
    const skill = parseOrThrow(SkillSaveSchema, body, 'body');
    const bytes = Buffer.byteLength(skill.code);
    if (bytes > this.#maxCodeBytes)
      throw new ServerError(
        'CODE_TOO_LARGE',
        `the skill's code is ${bytes} bytes; at most ${this.#maxCodeBytes}`,
        {
          path: 'code',
        },
      );
    if (skill.inputSchema) {
      const compiled = this.#validator.validate(skill.inputSchema, {}, 'input');
      if (!compiled.ok && compiled.message.startsWith('Invalid inputSchema'))
        throw new ServerError('VALIDATION', compiled.message, { path: 'inputSchema' });
    }
    const owner = principal.id;
    const existing = await this.#store.get(owner, skill.name);
    if (!existing && (await this.#store.count(owner)) >= MAX_SKILLS)
      throw new ServerError(
        'LIMIT_EXCEEDED',
        `a principal may have at most ${MAX_SKILLS} skills; delete one first`,
        {
          path: 'name',
        },
      );
    // The other skills are declared, so a skill may call them (itself too, recursively).
    const others = (await this.#store.list(owner)).filter((s) => s.name !== skill.name);
    const self = { name: skill.name, description: skill.description, inputSchema: skill.inputSchema ?? {} };
    const report = await this.#checker().checkSkill(skill.code, renderSkillDeclarations([...others, self]));
    if (report.errors.length > 0 || report.js === undefined) throw new SkillCheckFailed(report.errors);
    const inputSchema = skill.inputSchema ?? report.inputSchema;
    if (!inputSchema) throw new SkillCheckFailed(report.schemaError ? [report.schemaError] : []);
    const saved = await this.#store.save(owner, {
      name: skill.name,
      description: skill.description,
      inputSchema,
      code: skill.code,
      js: report.js,
      ...(createdBy !== undefined && { createdBy }),
    });
    this.#runSkills.delete(owner);
    return info(saved);
  }

  /**
   * Version `version` of `principal`'s skill `name` (the latest without one).
   * @throws ServerError `NOT_FOUND` when there is none (another principal's skill is not found either).
   */
  async get(principal: Principal, name: string, version?: number): Promise<SkillInfo> {
    const found = await this.#store.get(principal.id, name, version);
    if (!found)
      throw new ServerError(
        'NOT_FOUND',
        version === undefined ? `no skill ${name}` : `no version ${version} of skill ${name}`,
      );
    return info(found);
  }

  /** One page of `principal`'s skills (latest versions), newest first. @throws ServerError `VALIDATION`. */
  async list(principal: Principal, request: PageRequest): Promise<Page<SkillInfo>> {
    const { limit, after } = pageBounds(request, ['number', 'string']);
    const rows = await this.#store.list(principal.id, { limit: limit + 1, ...(after && { after }) });
    const page = toPage(rows, limit, (row) => row.key);
    return { ...page, items: page.items.map(({ key: _key, ...skill }) => info(skill)) };
  }

  /** Every skill of `principal` (latest versions), newest first: what MCP lists as tools. */
  async all(principal: Principal): Promise<SkillInfo[]> {
    return (await this.#store.list(principal.id)).map(({ key: _key, ...skill }) => info(skill));
  }

  /** Deletes `principal`'s skill `name` with its versions. @throws ServerError `NOT_FOUND`. */
  async delete(principal: Principal, name: string): Promise<void> {
    if (!(await this.#store.delete(principal.id, name)))
      throw new ServerError('NOT_FOUND', `no skill ${name}`);
    this.#runSkills.delete(principal.id);
  }

  /** The declarations of `owner`'s skills (`interface Skills { ... }`, '' without any), for `/tools.d.ts`. */
  async declarations(owner: string): Promise<string> {
    return (await this.forRun(owner)).declarations;
  }

  /** The latest version of each skill of `owner` as a run starts with them (cached, see `cacheMs`). */
  async forRun(owner: string): Promise<RunSkills> {
    const cached = this.#runSkills.get(owner);
    if (cached) return cached;
    const skills = await this.#store.list(owner);
    const loaded: RunSkills = {
      sources: Object.fromEntries(skills.map((skill) => [skill.name, skill.js])),
      declarations: renderSkillDeclarations(skills),
      schemas: new Map(skills.map((skill) => [skill.name, skill.inputSchema])),
    };
    this.#runSkills.set(owner, loaded);
    return loaded;
  }

  /**
   * The {@link SkillHost} of one run of `principal`'s process `pid`, over the skills the run started
   * with: inputs are checked against their schemas, `skills.save` saves as `principal`.
   */
  hostFor(principal: Principal, pid: number, run: RunSkills): SkillHost {
    return {
      sources: run.sources,
      checkInput: (name, input) => this.checkInput(run.schemas.get(name), name, input),
      save: async (skill) => {
        try {
          return await this.save(principal, skill, pid);
        } catch (error) {
          // The program branches on `code`, and reads every finding in the message.
          if (error instanceof SkillCheckFailed) {
            const findings = error.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('; ');
            throw Object.assign(new Error(`${error.message}. Findings: ${findings}`), {
              code: 'CHECK_FAILED',
            });
          }
          throw error;
        }
      },
    };
  }

  /**
   * Checks `input` of skill `name` against its `schema`.
   * @throws TypeError with `code` `VALIDATION`, naming the path (`input.n must be number`).
   */
  checkInput(schema: Record<string, unknown> | undefined, name: string, input: unknown): void {
    if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
      throw Object.assign(new TypeError(`skills.${name}: its input must be an object`), {
        code: 'VALIDATION',
      });
    const checked = this.#validator.validate(schema, input, 'input');
    if (!checked.ok)
      throw Object.assign(new TypeError(`skills.${name}: ${checked.message}`), { code: 'VALIDATION' });
  }
}

function info(skill: SkillVersion): SkillInfo {
  const { js: _js, ...rest } = skill;
  return rest;
}
