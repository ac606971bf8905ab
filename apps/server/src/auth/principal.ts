import type { Principal } from '../processes/process-manager-types.ts';

export type { Principal };

/** A principal's role: `client` sees and signals its own processes, `operator` every process. */
export type PrincipalRole = Principal['role'];

/** The principal of every caller when no token is configured (loopback-only local development). */
export const LOCAL_OPERATOR: Principal = Object.freeze({ id: 'local', role: 'operator' });
