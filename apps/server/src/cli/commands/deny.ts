import { decideCommand } from './approve.ts';

/** `mci deny ID... [--reason TEXT]` (see `approve.ts`). */
export default decideCommand('deny');
