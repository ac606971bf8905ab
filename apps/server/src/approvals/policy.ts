import { type PolicyDecision, PolicyDecisionSchema } from '@mci/protocol';
import picomatch from 'picomatch';
import { z } from 'zod';

/**
 * One policy rule (docs/approvals.md): its matchers, all of which must match, and the decision. Tool
 * rules match on `tool` (a glob on the tool name), `toolset`, `tag` and `annotation` (an annotation
 * hint that is true, e.g. `destructiveHint`); `fetch` rules match the sandbox's `fetch` on a
 * `host[:port]` glob, optional `methods` and optional path prefixes (`paths`). A rule is one kind or
 * the other.
 */
export const PolicyRuleSchema = z
  .strictObject({
    tool: z.string().min(1).optional(),
    toolset: z.string().min(1).optional(),
    tag: z.string().min(1).optional(),
    annotation: z.string().min(1).optional(),
    fetch: z.string().min(1).optional(),
    /** With `fetch`: the HTTP methods it covers (any case). @default every method */
    methods: z.array(z.string().min(1)).min(1).optional(),
    /** With `fetch`: the URL path prefixes it covers (`/v1/`). @default every path */
    paths: z.array(z.string().startsWith('/')).min(1).optional(),
    decision: PolicyDecisionSchema,
  })
  .superRefine((rule, context) => {
    const toolMatchers = [rule.tool, rule.toolset, rule.tag, rule.annotation].some((m) => m !== undefined);
    if (!toolMatchers && rule.fetch === undefined)
      context.addIssue({
        code: 'custom',
        message: 'a rule needs a matcher: tool, toolset, tag, annotation or fetch',
      });
    if (toolMatchers && rule.fetch !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['fetch'],
        message: 'a rule matches tools or fetch, not both: split it in two',
      });
    if (rule.methods && rule.fetch === undefined)
      context.addIssue({ code: 'custom', path: ['methods'], message: 'methods needs fetch' });
    if (rule.paths && rule.fetch === undefined)
      context.addIssue({ code: 'custom', path: ['paths'], message: 'paths needs fetch' });
  });
/** @see PolicyRuleSchema */
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** The rules of a server, in order (first match wins). */
export const PolicyRulesSchema = z.array(PolicyRuleSchema).max(1000);

/** What the policy check needs of a tool: its name and what the tool file says about it. */
export interface PolicyTool {
  name: string;
  toolset?: string | undefined;
  tags?: readonly string[] | undefined;
  annotations?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * A decision and where it came from: `rule` is the index of the matching rule; without one the
 * default decided (`ask` for a tool annotated `destructiveHint: true`, else `allow`).
 */
export interface Decided {
  decision: PolicyDecision;
  rule?: number;
}

type Matcher = (tool: PolicyTool) => boolean;

/** Rules compiled for matching: globs built once, tool decisions cached by name. */
export class Policies {
  readonly rules: readonly PolicyRule[];
  readonly #toolRules: Array<{ index: number; matches: Matcher; decision: PolicyDecision }> = [];
  readonly #fetchRules: Array<{
    index: number;
    host: (host: string) => boolean;
    methods: Set<string> | undefined;
    paths: readonly string[] | undefined;
    decision: PolicyDecision;
  }> = [];
  readonly #byTool = new Map<string, Decided>();

  /** @throws z.ZodError for rules that do not fit {@link PolicyRulesSchema}. */
  constructor(rules: readonly PolicyRule[]) {
    this.rules = PolicyRulesSchema.parse(rules);
    this.rules.forEach((rule, index) => {
      if (rule.fetch !== undefined) {
        this.#fetchRules.push({
          index,
          host: picomatch(rule.fetch.toLowerCase(), { dot: true }),
          methods: rule.methods && new Set(rule.methods.map((m) => m.toUpperCase())),
          paths: rule.paths,
          decision: rule.decision,
        });
        return;
      }
      const name = rule.tool === undefined ? undefined : picomatch(rule.tool, { dot: true });
      this.#toolRules.push({
        index,
        decision: rule.decision,
        matches: (tool) =>
          (name === undefined || name(tool.name)) &&
          (rule.toolset === undefined || tool.toolset === rule.toolset) &&
          (rule.tag === undefined || (tool.tags ?? []).includes(rule.tag)) &&
          (rule.annotation === undefined || tool.annotations?.[rule.annotation] === true),
      });
    });
  }

  /** The decision for calls of `tool` (the first matching rule, else the default). */
  forTool(tool: PolicyTool): Decided {
    const cached = this.#byTool.get(tool.name);
    if (cached) return cached;
    const rule = this.#toolRules.find((candidate) => candidate.matches(tool));
    const decided: Decided = rule
      ? { decision: rule.decision, rule: rule.index }
      : { decision: tool.annotations?.destructiveHint === true ? 'ask' : 'allow' };
    this.#byTool.set(tool.name, decided);
    return decided;
  }

  /**
   * The decision of the first `fetch` rule matching `url` and `method`; undefined when none does (the
   * sandbox's egress rules decide).
   */
  forFetch(url: URL, method: string): Decided | undefined {
    const host = url.hostname.toLowerCase();
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const upper = method.toUpperCase();
    const rule = this.#fetchRules.find(
      (candidate) =>
        (candidate.host(host) || candidate.host(`${host}:${port}`)) &&
        (candidate.methods === undefined || candidate.methods.has(upper)) &&
        (candidate.paths === undefined || candidate.paths.some((prefix) => url.pathname.startsWith(prefix))),
    );
    return rule && { decision: rule.decision, rule: rule.index };
  }
}
