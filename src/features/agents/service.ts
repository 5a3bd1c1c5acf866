import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import { recordAudit } from '../../audit/store.js';
import type { EmployersService } from '../employers/index.js';
import { normaliseIdentifier, parseAgentIdentifier } from './identifiers.js';
import type { SecretBox } from './secret-box.js';
import { recipientKey } from './spend-gates.js';
import * as store from './store.js';

export type IdentityScheme = 'hmac' | 'erc8004' | 'ed25519' | 'evm';

export interface AuthorizationInput {
  label: string;
  agentIdentifier: string;
  identityScheme: IdentityScheme | undefined;
  perTxCap: bigint;
  perDayCap: bigint;
  velocityPerMinute: number;
  allowedRecipients: string[] | null;
  elevatedPerTxCap: bigint | null;
  elevatedPerDayCap: bigint | null;
}

export type AuthorizationPatch = Partial<Omit<AuthorizationInput, 'agentIdentifier' | 'identityScheme'>>;

/** An authorization as the owner sees it, with its HMAC secret only when it was just issued. */
export interface IssuedAuthorization {
  authorization: store.AuthorizationRow;
  hmacSecret: string | null;
}

const HMAC_SECRET_PREFIX = 'ahs_';
const newHmacSecret = () => `${HMAC_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/**
 * Agent authorizations (spec 2.11, 3.3) managed by the employer's owner: each names one agent
 * identifier, how it proves itself, and its spend limits. Every change is audited in its
 * transaction; another tenant's authorization answers exactly like a missing one.
 */
export interface AgentsServiceOptions {
  database: Database;
  employers: EmployersService;
  /** Seals HMAC agents' secrets at rest. */
  secrets: SecretBox;
}

export class AgentsService {
  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly secrets: SecretBox;

  constructor({ database, employers, secrets }: AgentsServiceOptions) {
    this.database = database;
    this.employers = employers;
    this.secrets = secrets;
  }

  async create(caller: Caller, employerId: string, input: AuthorizationInput, requestId: string): Promise<IssuedAuthorization> {
    const identifier = normaliseIdentifier(input.agentIdentifier);
    const scheme = schemeFor(identifier, input.identityScheme);
    checkCaps(input);
    const id = crypto.randomUUID();
    const secret = scheme === 'hmac' ? newHmacSecret() : null;
    const sealed = secret === null ? null : await this.secrets.seal(secret, id);
    const row = await this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const inserted = await store.insertAuthorization(tx.db, {
        id,
        employerId,
        label: input.label,
        agentIdentifier: identifier,
        identityScheme: scheme,
        hmacSecretCiphertext: sealed,
        perTxCap: input.perTxCap,
        perDayCap: input.perDayCap,
        velocityPerMinute: input.velocityPerMinute,
        allowedRecipients: input.allowedRecipients && recipientKeys(input.allowedRecipients),
        elevatedPerTxCap: input.elevatedPerTxCap,
        elevatedPerDayCap: input.elevatedPerDayCap,
      });
      if (!inserted) {
        throw new AppError('AGENT_IDENTIFIER_TAKEN', 'This employer already has an active authorization for this agent identifier.', {
          field: 'agent_identifier',
        });
      }
      await this.audit(tx.db, caller, employerId, 'agent_authorization.created', inserted.id, requestId, { identifier, scheme });
      return inserted;
    });
    return { authorization: row, hmacSecret: secret };
  }

  async list(caller: Caller, employerId: string, includeRevoked: boolean): Promise<store.AuthorizationRow[]> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return store.listAuthorizations(this.database.db, employerId, includeRevoked);
  }

  async get(caller: Caller, employerId: string, id: string): Promise<store.AuthorizationRow> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return (await store.findAuthorization(this.database.db, employerId, id)) ?? throwNotFound();
  }

  /**
   * Changes limits or the label. Setting `per_tx_cap_usd` explicitly replaces a halved cap (the
   * owner has decided), so the halving record is cleared with it.
   */
  async update(caller: Caller, employerId: string, id: string, patch: AuthorizationPatch, requestId: string): Promise<store.AuthorizationRow> {
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const current = (await store.findAuthorization(tx.db, employerId, id)) ?? throwNotFound();
      if (current.revokedAt) throw revokedConflict();
      checkCaps({
        perTxCap: patch.perTxCap ?? current.perTxCap,
        perDayCap: patch.perDayCap ?? current.perDayCap,
        elevatedPerTxCap: patch.elevatedPerTxCap !== undefined ? patch.elevatedPerTxCap : current.elevatedPerTxCap,
        elevatedPerDayCap: patch.elevatedPerDayCap !== undefined ? patch.elevatedPerDayCap : current.elevatedPerDayCap,
      });
      const changes: Partial<store.NewAuthorization> = {
        ...(patch.label !== undefined && { label: patch.label }),
        ...(patch.perTxCap !== undefined && { perTxCap: patch.perTxCap, perTxCapOriginal: null, capHalvedAt: null }),
        ...(patch.perDayCap !== undefined && { perDayCap: patch.perDayCap }),
        ...(patch.velocityPerMinute !== undefined && { velocityPerMinute: patch.velocityPerMinute }),
        ...(patch.allowedRecipients !== undefined && { allowedRecipients: patch.allowedRecipients && recipientKeys(patch.allowedRecipients) }),
        ...(patch.elevatedPerTxCap !== undefined && { elevatedPerTxCap: patch.elevatedPerTxCap }),
        ...(patch.elevatedPerDayCap !== undefined && { elevatedPerDayCap: patch.elevatedPerDayCap }),
      };
      const updated = (await store.updateAuthorization(tx.db, employerId, id, changes)) ?? throwNotFound();
      await this.audit(tx.db, caller, employerId, 'agent_authorization.updated', id, requestId, { fields: Object.keys(patch) });
      return updated;
    });
  }

  /** Revokes (idempotent: revoking a revoked authorization returns it unchanged). */
  async revoke(caller: Caller, employerId: string, id: string, requestId: string): Promise<store.AuthorizationRow> {
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const revoked = await store.revokeAuthorization(tx.db, employerId, id);
      if (!revoked) return (await store.findAuthorization(tx.db, employerId, id)) ?? throwNotFound();
      await this.audit(tx.db, caller, employerId, 'agent_authorization.revoked', id, requestId);
      return revoked;
    });
  }

  /** A new HMAC secret, shown this once; the old one stops working at once. */
  async rotateSecret(caller: Caller, employerId: string, id: string, requestId: string): Promise<IssuedAuthorization> {
    const secret = newHmacSecret();
    const sealed = await this.secrets.seal(secret, id);
    const row = await this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const current = (await store.findAuthorization(tx.db, employerId, id)) ?? throwNotFound();
      if (current.revokedAt) throw revokedConflict();
      if (current.identityScheme !== 'hmac') {
        throw new AppError('NOT_AN_HMAC_AUTHORIZATION', `This agent proves itself with ${current.identityScheme}; it has no secret to rotate.`);
      }
      const updated = (await store.updateAuthorization(tx.db, employerId, id, { hmacSecretCiphertext: sealed })) ?? throwNotFound();
      await this.audit(tx.db, caller, employerId, 'agent_authorization.secret_rotated', id, requestId);
      return updated;
    });
    return { authorization: row, hmacSecret: secret };
  }

  /** Puts back the per-tx cap gate 6 halved. */
  async restoreCap(caller: Caller, employerId: string, id: string, requestId: string): Promise<store.AuthorizationRow> {
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const restored = await store.restoreHalvedCap(tx.db, employerId, id);
      if (!restored) {
        const current = (await store.findAuthorization(tx.db, employerId, id)) ?? throwNotFound();
        if (current.revokedAt) throw revokedConflict();
        throw new AppError('CAP_NOT_HALVED', 'The per-transaction cap of this authorization is not halved.');
      }
      await this.audit(tx.db, caller, employerId, 'agent_authorization.cap_restored', id, requestId, { per_tx_cap: restored.perTxCap.toString() });
      return restored;
    });
  }

  /** Spec 4.8 / 5.4: pauses every active authorization of the employer (the human owner only; routes refuse agents). */
  async pauseAll(caller: Caller, employerId: string, reason: string, requestId: string) {
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const pausedAt = this.database.clock.now();
      const paused = await store.pauseAll(tx.db, employerId, reason, pausedAt);
      await this.audit(tx.db, caller, employerId, 'agents.paused_all', employerId, requestId, { reason, count: paused.length });
      return { pausedAt, reason, paused };
    });
  }

  async resumeAll(caller: Caller, employerId: string, requestId: string) {
    return this.database.transaction(async (tx) => {
      await this.employers.requireOwned(tx.db, caller, employerId);
      const resumed = await store.resumeAll(tx.db, employerId);
      await this.audit(tx.db, caller, employerId, 'agents.resumed_all', employerId, requestId, { count: resumed.length });
      return { resumedAt: this.database.clock.now(), resumed };
    });
  }

  /** The authorization's HMAC secret, decrypted for verifying a proof. */
  hmacSecret(row: store.AuthorizationRow): Promise<string> {
    if (!row.hmacSecretCiphertext) throw new Error(`authorization ${row.id} has no HMAC secret`);
    return this.secrets.open(row.hmacSecretCiphertext, row.id);
  }

  private audit(db: Parameters<typeof recordAudit>[0], caller: Caller, employerId: string, action: string, targetId: string, requestId: string, details?: Record<string, unknown>) {
    return recordAudit(db, { actorUserId: caller.userId, actorKind: 'user', action, employerId, targetType: 'agent_authorization', targetId, details, requestId });
  }
}

/**
 * The scheme the identifier's form allows: ERC-8004 ids, Solana keys and EVM addresses may prove with
 * their key; anything may use HMAC, which stays the default for an EVM address (docs/api.md).
 */
function schemeFor(identifier: string, asked: IdentityScheme | undefined): IdentityScheme {
  const identity = parseAgentIdentifier(identifier);
  const natural: IdentityScheme = identity.kind === 'erc8004' ? 'erc8004' : identity.kind === 'solana' ? 'ed25519' : 'hmac';
  const scheme = asked ?? natural;
  if (scheme === 'erc8004' && identity.kind !== 'erc8004') {
    throw badRequest('identity_scheme', 'erc8004 needs an identifier of the form erc8004:tempo:<agent_id> (or erc8004:eip155:4217:<agent_id>)');
  }
  if (scheme === 'ed25519' && identity.kind !== 'solana') {
    throw badRequest('identity_scheme', 'ed25519 needs an identifier that is a base58 Solana public key (optionally prefixed solana:)');
  }
  if (scheme === 'evm' && identity.kind !== 'evm') throw badRequest('identity_scheme', 'evm needs an identifier that is a 0x-prefixed 20-byte EVM address');
  return scheme;
}

/** A day's cap below one payment's would make the per-tx cap meaningless; elevated caps only ever raise. */
function checkCaps(caps: { perTxCap: bigint; perDayCap: bigint; elevatedPerTxCap: bigint | null; elevatedPerDayCap: bigint | null }) {
  if (caps.perDayCap < caps.perTxCap) throw badRequest('per_day_cap_usd', 'must be at least per_tx_cap_usd');
  if (caps.elevatedPerTxCap !== null && caps.elevatedPerTxCap < caps.perTxCap) {
    throw badRequest('elevated_per_tx_cap_usd', 'must be at least per_tx_cap_usd');
  }
  if (caps.elevatedPerDayCap !== null && caps.elevatedPerDayCap < caps.perDayCap) {
    throw badRequest('elevated_per_day_cap_usd', 'must be at least per_day_cap_usd');
  }
  if (caps.elevatedPerDayCap !== null && caps.elevatedPerDayCap < (caps.elevatedPerTxCap ?? caps.perTxCap)) {
    throw badRequest('elevated_per_day_cap_usd', 'must be at least the elevated per-transaction cap');
  }
}

const recipientKeys = (addresses: string[]) => [...new Set(addresses.map(recipientKey))];
const throwNotFound = (): never => {
  throw notFound('Agent authorization');
};
const revokedConflict = () => new AppError('AUTHORIZATION_REVOKED', 'This authorization is revoked; create a new one.');
