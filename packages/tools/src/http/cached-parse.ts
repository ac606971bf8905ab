/**
 * Wraps a pure parse of a string so that each distinct input is parsed once: the result is kept,
 * up to `size` inputs (the oldest kept one is dropped first). A parse that throws is not kept. The
 * results are shared by every caller, so they must never be changed.
 */
export function cachedParse<T>(size: number, parse: (input: string) => T): (input: string) => T {
  const results = new Map<string, T>();
  return (input) => {
    let result = results.get(input);
    if (result === undefined) {
      result = parse(input);
      // A Map iterates in insertion order: the first key is the oldest.
      if (results.size >= size) results.delete(results.keys().next().value as string);
      results.set(input, result);
    }
    return result;
  };
}
