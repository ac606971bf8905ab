/**
 * The sandbox's `tools` and `skills` globals: frozen tables of functions the host answers, whose
 * unknown names throw a `TypeError` that lists the near names.
 */
// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Cloner } from './clone.ts';
import type { Primordials } from './primordials.ts';

/**
 * A call the host answers later (a tool, a skill's input check, the catalog): `send`s `kind` with a
 * fresh call id and `a`, `b`, and resolves or rejects when the worker settles that id.
 */
export type HostRequest = (kind: string, a: unknown, b?: unknown) => Promise<unknown>;

/** Installs the `tools` and `skills` globals of one run; see {@link createToolsAndSkills}. */
export interface ToolsAndSkills {
  /** Defines `tools`: a function per name in `names`, and `tools.search`/`tools.describe` unless a tool takes the name. */
  installTools(names: string[]): void;
  /** Defines `skills`: a function per skill in `sources` (name -> function body), and `skills.save`. */
  installSkills(sources: Record<string, string>): void;
}

/**
 * Returns the installers of the `tools` and `skills` globals. Each call goes out through `hostCall`
 * with arguments copied by `cloner`; `define` sets a global. Called while the bootstrap runs, so
 * the `Function` constructor skills load with is the one from before any program code.
 */
export function createToolsAndSkills(
  P: Primordials,
  hostCall: HostRequest,
  cloner: Cloner,
  define: (name: string, value: unknown) => void,
): ToolsAndSkills {
  const closeNames = (name: string, names: string[]) => {
    const distance = (a: string, b: string) => {
      const row = P.Array.from({ length: b.length + 1 }, (_, i) => i);
      for (let i = 1; i <= a.length; i++) {
        let prev = row[0]!;
        row[0] = i;
        for (let j = 1; j <= b.length; j++) {
          const next = row[j]!;
          row[j] = P.mathMin(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
          prev = next;
        }
      }
      return row[b.length]!;
    };
    const lower = P.stringToLowerCase(name);
    return names
      .map((n) => ({ n, d: distance(lower, P.stringToLowerCase(n)) }))
      .filter(
        ({ n, d }) =>
          d <= P.mathMax(2, P.mathFloor(name.length / 3)) || P.stringToLowerCase(n).includes(lower),
      )
      .sort((a, b) => a.d - b.d)
      .slice(0, 3)
      .map(({ n }) => n);
  };

  // Keys that promise resolution, JSON and printing probe on any object: they read as usual
  // (`undefined` when absent) instead of throwing.
  const passThrough = new P.Set<unknown>(['then', 'toJSON', 'constructor', 'inspect', 'valueOf', 'toString']);
  /**
   * `table`, frozen, behind a proxy that throws a `TypeError` with the message `unknown(key, close)`
   * for a string key it does not have (`close`: the names of `names` near `key`).
   */
  const strictTable = (
    table: Record<string, unknown>,
    names: string[],
    unknown: (key: string, close: string[]) => string,
  ) => {
    P.objectFreeze(table);
    return new P.Proxy(table, {
      get(target, key, receiver) {
        if (typeof key === 'symbol' || key in target || passThrough.has(key))
          return P.reflectGet(target, key, receiver);
        throw new P.TypeError(unknown(key, closeNames(key, names)));
      },
    });
  };
  const installTools = (names: string[]) => {
    const table: Record<string, unknown> = {};
    for (const name of names) {
      const what = `tools[${P.jsonStringify(name)}]() argument`;
      const fn = {
        [name](props: unknown = {}) {
          return hostCall('tool', name, cloner.copyOut(props, what));
        },
      }[name];
      P.defineProperty(table, name, { value: fn, enumerable: true });
    }
    // Finding tools, answered by the host's catalog (which checks the arguments). A tool of the tool
    // file with the same name wins; not enumerable, so `Object.keys(tools)` lists the tools alone.
    const finders: Record<string, (...args: unknown[]) => unknown> = {
      search(query: unknown, options?: unknown) {
        return hostCall('catalog', 'search', cloner.copyOut([query, options], 'tools.search() argument'));
      },
      describe(name: unknown) {
        return hostCall('catalog', 'describe', cloner.copyOut([name], 'tools.describe() argument'));
      },
    };
    for (const name of ['search', 'describe']) {
      if (!(name in table)) P.defineProperty(table, name, { value: finders[name], enumerable: false });
    }
    const tools = strictTable(table, names, (key, close) => {
      const hint =
        close.length > 0
          ? ` Did you mean ${close.map((n) => `tools[${P.jsonStringify(n)}]`).join(', ')}?`
          : '';
      const list =
        names.length > 0 ? ` Available tools: ${names.join(', ')}.` : ' This execution has no tools.';
      return `Unknown tool "${key}".${hint}${list}`;
    });
    define('tools', tools);
  };

  // Taken before any program code runs, so a program that replaces `Function` cannot change how
  // skills load. Skills are the principal's own code: they get no more than the program has.
  const FunctionConstructor = P.globalThis.Function;
  const installSkills = (sources: Record<string, string>) => {
    const names = P.objectKeys(sources);
    const loaded = new P.Map<string, unknown>();
    // A skill's module runs once, on its first call: most runs call few of the skills they could.
    const load = (name: string) => {
      if (P.mapHas(loaded, name)) return P.mapGet(loaded, name);
      const exports: { default?: unknown } = {};
      P.apply(new FunctionConstructor('exports', sources[name]!), undefined, [exports]);
      if (typeof exports.default !== 'function')
        throw new P.TypeError(`skills.${name}: its module did not export a function as its default`);
      P.mapSet(loaded, name, exports.default);
      return exports.default;
    };
    const table: Record<string, unknown> = {};
    for (const name of names) {
      const what = `skills.${name}() input`;
      const fn = {
        async [name](input: unknown) {
          // The host checks the input against the skill's schema first; a misfit rejects here.
          await hostCall('skill', 'input', cloner.copyOut([name, input], what));
          return P.apply(load(name) as (input: unknown) => unknown, undefined, [input]);
        },
      }[name];
      P.defineProperty(table, name, { value: fn, enumerable: true });
    }
    P.defineProperty(table, 'save', {
      enumerable: false,
      value: function save(skill: unknown) {
        return hostCall('skill', 'save', cloner.copyOut([skill], 'skills.save() argument'));
      },
    });
    const skills = strictTable(table, names, (key, close) => {
      const hint = close.length > 0 ? ` Did you mean ${close.map((n) => `skills.${n}`).join(', ')}?` : '';
      const list = names.length > 0 ? ` Saved skills: ${names.join(', ')}.` : ' No skill is saved yet.';
      return `Unknown skill "${key}".${hint}${list}`;
    });
    define('skills', skills);
  };

  return { installTools, installSkills };
}
