import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../db/client.js';
import type { PaidCaller, PaidCallerResolver } from '../../http/paid-caller.js';
import { AppError } from '../../errors.js';
import type { IdentityVerifier } from '../../providers/identity/verifier.js';
import type { UsersService } from '../users/index.js';
import * as store from './store.js';

export type { PaidCaller };

export const IDENTITY_TOKEN_HEADER = 'X-Identity-Token';
export const AGENT_KEY_HEADER = 'X-Agent-Key';

const AGENT_KEY_PREFIX = 'sk_agent_';
const AGENT_KEY_PATTERN = /^sk_agent_[A-Za-z0-9_-]{43}$/;

export const hashAgentKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** A fresh agent key: 32 random bytes; only its hash and a display prefix are ever stored. */
export function newAgentKey(): { key: string; hash: string; prefix: string } {
  const key = `${AGENT_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, hash: hashAgentKey(key), prefix: key.slice(0, AGENT_KEY_PREFIX.length + 6) };
}

const unauthenticated = (header: string, why: string) =>
  new AppError('UNAUTHENTICATED', `${header}: ${why}`, { field: header });

/**
 * Who is behind a paid request, beyond the payment. Paid routes carry the payment in
 * `Authorization`, so identity travels in its own headers (docs/decisions.md, "Who may call a
 * paid route"):
 * - `X-Identity-Token: <identity-provider JWT>`: a signed-in person (employer owner, employee);
 * - `X-Agent-Key: <the employer's agent key>`: an agent acting for that employer.
 * Without either the caller is anonymous: payment alone buys only what is not an employer's data.
 */
export class PaidCallers implements PaidCallerResolver {
  private readonly database: Database;
  private readonly verifyIdentity: IdentityVerifier;
  private readonly users: UsersService;

  constructor(options: { database: Database; verifyIdentity: IdentityVerifier; users: UsersService }) {
    this.database = options.database;
    this.verifyIdentity = options.verifyIdentity;
    this.users = options.users;
  }

  /**
   * Resolves the identity headers of a paid request. A header that is present but wrong is a 401
   * (after payment, so the fee is kept: docs/decisions.md); sending both is refused as ambiguous.
   */
  async resolve(headers: Headers): Promise<PaidCaller> {
    const token = headers.get(IDENTITY_TOKEN_HEADER);
    const agentKey = headers.get(AGENT_KEY_HEADER);
    if (token !== null && agentKey !== null) {
      throw new AppError('VALIDATION_ERROR', `Send ${IDENTITY_TOKEN_HEADER} or ${AGENT_KEY_HEADER}, not both.`, { field: AGENT_KEY_HEADER });
    }
    if (token !== null) {
      let claims;
      try {
        claims = await this.verifyIdentity(token.trim());
      } catch {
        throw unauthenticated(IDENTITY_TOKEN_HEADER, 'the identity token is invalid or expired');
      }
      return { kind: 'user', caller: await this.users.resolveCaller(claims) };
    }
    if (agentKey !== null) {
      const key = agentKey.trim();
      const employer = AGENT_KEY_PATTERN.test(key) ? await store.findEmployerByAgentKeyHash(this.database.db, hashAgentKey(key)) : null;
      if (!employer) throw unauthenticated(AGENT_KEY_HEADER, 'unknown or rotated agent key');
      return { kind: 'agent_key', employerId: employer.id };
    }
    return { kind: 'anonymous' };
  }

  /** Whether the caller may act for this employer: its owner, or an agent holding its key. */
  static actsFor(paid: PaidCaller, employerId: string): boolean {
    if (paid.kind === 'agent_key') return paid.employerId === employerId;
    if (paid.kind === 'user') return paid.caller.ownedEmployerId === employerId;
    return false;
  }

  /** Whether the caller is this employee (a signed-in user linked to the record). */
  static isEmployee(paid: PaidCaller, employeeId: string): boolean {
    return paid.kind === 'user' && paid.caller.employeeIds.includes(employeeId);
  }
}
