import fc from 'fast-check';

/**
 * Structured-clone data as `output()` accepts it: JSON values plus bigint, Date, Map, Set and typed
 * arrays (no boxed primitives, sparse arrays or null-prototype objects, which a clone does not keep
 * apart). `constraints` bound the size (`maxDepth`, `maxKeys`).
 */
export function cloneableValue(
  constraints: Pick<fc.ObjectConstraints, 'maxDepth' | 'maxKeys'> = {},
): fc.Arbitrary<unknown> {
  return fc.anything({
    ...constraints,
    withBigInt: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
    withNullPrototype: false,
    withBoxedValues: false,
    withSparseArray: false,
    withObjectString: false,
  });
}
