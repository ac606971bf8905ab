/**
 * How many values (objects, arrays and scalars, the root included) the JSON value `value` holds,
 * counting no further than `stopAt`: a huge value costs no more than a small one.
 */
export function countJsonNodes(value: unknown, stopAt: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count < stopAt) {
    const node = stack.pop();
    count++;
    if (node !== null && typeof node === 'object') stack.push(...Object.values(node));
  }
  return count;
}
