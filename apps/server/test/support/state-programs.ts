/**
 * A program that adds 1 to the `state` key `n` of its session by compare-and-set, trying again on
 * `VERSION_CONFLICT`, and returns the version it read: concurrent runs of it must end with `n` equal
 * to their number.
 */
export const CAS_INCREMENT_PROGRAM = `
  for (;;) {
    const { value, version } = await state.get('n', { withVersion: true });
    try { await state.set('n', (value ?? 0) + 1, { ifVersion: version }); return version; }
    catch (e) { if (e.code !== 'VERSION_CONFLICT') throw e; }
  }`;
