// A generated catalog of up to 1,000 tools for tests and benches of tool search: tool i does one of
// ten verbs to one of ten nouns for one of ten teams, so every tool has its own description.

const VERBS = [
  'Lists',
  'Creates',
  'Deletes',
  'Updates',
  'Archives',
  'Exports',
  'Counts',
  'Checks',
  'Merges',
  'Sends',
];
const NOUNS = [
  'invoices',
  'tickets',
  'users',
  'orders',
  'shipments',
  'reports',
  'payments',
  'contracts',
  'alerts',
  'notes',
];
const TEAMS = [
  'billing',
  'support',
  'sales',
  'logistics',
  'legal',
  'finance',
  'security',
  'research',
  'design',
  'hiring',
];

/** The team of tool `i` (0 to 999). */
export const teamOf = (i: number): string => TEAMS[Math.floor(i / 100) % 10]!;

/** The description of tool `i` (0 to 999): `Creates shipments for the legal team.` */
export const describeTool = (i: number): string =>
  `${VERBS[i % 10]} ${NOUNS[Math.floor(i / 10) % 10]} for the ${teamOf(i)} team.`;
