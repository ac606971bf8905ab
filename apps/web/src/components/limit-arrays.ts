/** A JSON value with its long arrays cut, and how long the longest cut array was. */
export interface LimitedValue {
  value: unknown;
  /** Length of the longest array cut to `limit` items; 0 when none was cut. */
  longest: number;
}

/**
 * A copy of the JSON value `value` in which every array longer than `limit` keeps its first `limit`
 * items, at any depth; parts with no long array are shared, not copied. `limit` counts items (>= 0).
 */
export function limitArrays(value: unknown, limit: number): LimitedValue {
  let longest = 0;
  const visit = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) {
      if (node.length > limit) longest = Math.max(longest, node.length);
      const items = node.length > limit ? node.slice(0, limit) : node;
      const visited = items.map(visit);
      return visited.every((item, i) => item === items[i]) && items === node ? node : visited;
    }
    let changed = false;
    const entries = Object.entries(node).map(([key, item]) => {
      const visited = visit(item);
      if (visited !== item) changed = true;
      return [key, visited] as const;
    });
    return changed ? Object.fromEntries(entries) : node;
  };
  return { value: visit(value), longest };
}
