import type { Database, Db } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import type { IdentityClaims } from '../../providers/identity/verifier.js';
import { linkEmployeesByEmail } from '../employers/index.js';
import * as store from './store.js';

export interface UsersServiceOptions {
  database: Database;
  /** Platform admins (`ADMIN_USER_IDS`). */
  adminUserIds: ReadonlySet<string>;
}

export class UsersService {
  private readonly database: Database;
  private readonly adminUserIds: ReadonlySet<string>;

  constructor(options: UsersServiceOptions) {
    this.database = options.database;
    this.adminUserIds = options.adminUserIds;
  }

  /**
   * The caller behind a verified token. A known user with unchanged claims costs one read; a new
   * user (or a changed email) is stored first, and employee records waiting for that verified
   * email are linked to them.
   */
  async resolveCaller(claims: IdentityClaims): Promise<Caller> {
    let user = await store.findUserWithRoles(this.database.db, claims.sub);
    // A token without an email says nothing about it: only a present claim counts as a change.
    const emailChanged =
      claims.email !== null && (user?.email !== claims.email || user.emailVerified !== claims.emailVerified);
    if (!user || emailChanged) {
      user = await this.database.transaction(async (tx) => {
        await store.upsertUser(tx.db, { id: claims.sub, email: claims.email, emailVerified: claims.emailVerified });
        if (claims.email && claims.emailVerified) await linkEmployeesByEmail(tx.db, claims.sub, claims.email);
        return store.findUserWithRoles(tx.db, claims.sub);
      });
    }
    if (!user) throw new Error(`user ${claims.sub} vanished while being resolved`);
    return {
      userId: user.id,
      email: user.email,
      isPlatformAdmin: this.adminUserIds.has(user.id),
      ownedEmployerId: user.ownedEmployerId,
      employeeIds: user.employeeIds,
    };
  }

  /** Makes sure a user row exists (e.g. before it owns something), inside the caller's transaction. */
  ensureUser(db: Db, user: { id: string; email: string | null; emailVerified: boolean }) {
    return store.upsertUser(db, user);
  }

  findVerifiedUserIdByEmail(db: Db, email: string) {
    return store.findVerifiedUserIdByEmail(db, email);
  }
}
