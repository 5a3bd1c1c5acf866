import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { clockNow } from '../../db/columns.js';
import { activeEmployeeIdsOf, ownedEmployerIdOf } from '../employers/index.js';
import { users } from './tables.js';

export interface UserRecord {
  id: string;
  email: string | null;
  emailVerified: boolean;
  ownedEmployerId: string | null;
  employeeIds: string[];
}

/** The user with the employer they own and their active employee records, in one round trip. */
export async function findUserWithRoles(db: Db, userId: string): Promise<UserRecord | null> {
  const rows = await db
    .select({
      id: users.id,
      email: users.email,
      emailVerified: users.emailVerified,
      // Correlated subqueries name the outer table explicitly: drizzle renders columns unqualified.
      ownedEmployerId: ownedEmployerIdOf(sql`users.id`),
      employeeIds: activeEmployeeIdsOf(sql`users.id`),
    })
    .from(users)
    .where(eq(users.id, userId));
  return rows[0] ?? null;
}

export async function upsertUser(db: Db, user: { id: string; email: string | null; emailVerified: boolean }) {
  await db
    .insert(users)
    .values(user)
    .onConflictDoUpdate({
      target: users.id,
      // A missing email (null) keeps the stored one.
      set: {
        email: sql`coalesce(excluded.email, users.email)`,
        emailVerified: sql`CASE WHEN excluded.email IS NULL THEN users.email_verified ELSE excluded.email_verified END`,
        lastSeenAt: clockNow,
      },
    });
}

/** The id of a user who proved this email address, if any. */
export async function findVerifiedUserIdByEmail(db: Db, email: string): Promise<string | null> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.email, email), eq(users.emailVerified, true)))
    .limit(1);
  return rows[0]?.id ?? null;
}
