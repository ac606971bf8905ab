/**
 * `Omit` applied to each member of a union: `DistributiveOmit<A | B, 'id'>` is
 * `Omit<A, 'id'> | Omit<B, 'id'>` (plain `Omit` would keep only the keys the members share).
 */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
