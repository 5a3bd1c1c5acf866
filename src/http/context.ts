import type { Logger } from '../log.js';

/** Who is calling an internal route, resolved from the identity-provider JWT (spec 5.3). */
export interface Caller {
  userId: string;
  email: string | null;
  isPlatformAdmin: boolean;
  /** The employer this user owns, if any (one per owner). */
  ownedEmployerId: string | null;
  /** Employee records linked to this user, across employers. */
  employeeIds: string[];
}

export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    caller: Caller;
  };
}
