import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * Where a tool may read files and run commands. Built by {@link pathPolicyFor} from the tool file's
 * `enableAnyPaths` / `directoryAllowList` and the tool's own overrides.
 */
export interface PathPolicy {
  /** The directory of the main tool file: relative paths resolve against it, and it is always a root. */
  baseDir: string;
  /** Absolute allowed roots, `baseDir` first. */
  roots: string[];
  /** When true, any path is allowed. */
  anyPaths: boolean;
}

/** The path settings of a tool file and of one tool, as loaded. */
export interface PathSettings {
  enableAnyPaths?: boolean | undefined;
  directoryAllowList?: readonly string[] | undefined;
}

/**
 * Combines the schema-level and tool-level path settings: a tool's non-empty `directoryAllowList`
 * replaces the schema's, and a tool's `enableAnyPaths` (true or false) replaces the schema's.
 * Allow-list entries are absolute or relative to `baseDir`.
 */
export function pathPolicyFor(baseDir: string, file: PathSettings, tool: PathSettings = {}): PathPolicy {
  const list = tool.directoryAllowList?.length ? tool.directoryAllowList : (file.directoryAllowList ?? []);
  const roots = [baseDir, ...list.map((entry) => resolve(baseDir, entry))];
  return { baseDir, roots, anyPaths: tool.enableAnyPaths ?? file.enableAnyPaths ?? false };
}

/** A path outside every allowed root. */
export class PathViolation extends Error {
  override name = 'PathViolation';
}

/**
 * Resolves `path` against `policy.baseDir`, follows symlinks (realpath; for a path that does not
 * exist yet, of its nearest existing ancestor) and checks it lies inside one of the roots by whole
 * path components (`/data-evil` is not inside `/data`). Returns the path to use: the resolved real
 * path that was checked (so a symlink swapped afterwards cannot redirect the read), or with
 * `anyPaths` the absolute path.
 *
 * @throws {PathViolation} naming the path as given (never where it resolves to, nor the roots: the
 * message reaches clients, who must not learn the server's directories or, through `/proc/self`, its pid).
 */
export async function checkPath(path: string, policy: PathPolicy): Promise<string> {
  const absolute = resolve(policy.baseDir, path);
  if (policy.anyPaths) return absolute;
  const real = await realpathLenient(absolute);
  for (const root of policy.roots) {
    if (isInside(await realpathLenient(root), real)) return real;
  }
  throw new PathViolation(
    `Path "${path}" is outside the allowed directories (the tool file's directory and its directoryAllowList)`,
  );
}

/** True when `child` equals `root` or lies below it, by whole path components. */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

async function realpathLenient(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const parent = dirname(path);
    if (parent === path || !isMissing(error)) return path;
    return join(await realpathLenient(parent), basename(path));
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
