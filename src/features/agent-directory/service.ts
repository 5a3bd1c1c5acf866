import { getAddress, type Address } from 'viem';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database } from '../../db/client.js';
import { AppError, badRequest } from '../../errors.js';
import { ProofFailures } from '../agents/index.js';
import { readProofHeaders, verifyProof, type ProofFailure, type ProofRequest, type ProofScheme } from '../agents/index.js';
import { signatureClaimer } from '../agents/index.js';
import { parseAgentIdentifier, type AgentIdentity } from '../agents/index.js';

/** The identifiers a key can prove: every form but an opaque token (docs/api.md, "Agent registration and directory"). */
type RegistrableIdentity = Exclude<AgentIdentity, { kind: 'opaque' }>;
const IDENTIFIER_RULE =
  'must be erc8004:eip155:4217:<agent id> (or erc8004:tempo:<agent id>), solana:<base58 32-byte key>, or a 0x-prefixed 20-byte EVM address';

function parseRegistrableIdentifier(value: string): RegistrableIdentity | null {
  const identity = parseAgentIdentifier(value);
  return identity.kind === 'opaque' ? null : identity;
}
import * as store from './store.js';
import type { AgentRegistrationRow, DirectoryPosition } from './store.js';

export type { AgentRegistrationRow, DirectoryPosition } from './store.js';

export const IDENTIFIER_HEADER = 'X-Agent-Identifier';
/** Ed25519 signature, by the Solana key a registration links, over the same canonical message. */
export const LINK_SIGNATURE_HEADER = 'X-Agent-Solana-Signature';

/** The profile a registration sets; a re-registration replaces all of it. */
export interface AgentProfileInput {
  displayName: string;
  description: string | null;
  capabilities: string[];
  /** A Solana key to link (non-Solana identities; proven by `X-Agent-Solana-Signature`), or null. */
  solanaPublicKey: string | null;
}

export interface RegistrationRequest {
  /** The request's headers: the identity proof (and the link signature, when linking). */
  headers: Headers;
  method: string;
  /** The path and query exactly as sent. */
  pathWithQuery: string;
  /** The raw body bytes, exactly as received (the proof signs their SHA-256). */
  body: Uint8Array;
  profile: AgentProfileInput;
  /** The `payments` row of the registration fee. */
  feePaymentId: string;
  /** The fee settled before and its answer was lost (`c.var.payment.redeemed`): its registration is answered, not redone. */
  redeemed?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const PROOF_FIELD: Record<ProofFailure, string> = {
  PROOF_MISSING: 'X-Agent-Signature',
  PROOF_STALE: 'X-Agent-Timestamp',
  PROOF_INVALID: 'X-Agent-Signature',
  PROOF_REPLAYED: 'X-Agent-Signature',
};
const proofError = (code: ProofFailure, reason: string, field = PROOF_FIELD[code]) =>
  new AppError(code, `${reason}.`, { field });

/**
 * Agent registration and the public directory (spec 4.6: POST /api/mpp/agents/register,
 * GET /api/agents/directory, GET /api/agents/profile/{id}). A registration is owned by whoever
 * can sign for its identifier; re-registering replaces the profile.
 */
export interface AgentDirectoryServiceOptions {
  database: Database;
  tempo: Pick<TempoChain, 'agentOwner'>;
  /** Counts refused proofs per identifier (429 past the limit); default: uncounted. */
  failures?: ProofFailures;
  /** The clock the proofs' timestamps are checked against; default: the real time (X-Agent-Timestamp is the agent's clock, not the service clock). */
  nowSeconds?: () => number;
}

export class AgentDirectoryService {
  private readonly database: Database;
  private readonly tempo: Pick<TempoChain, 'agentOwner'>;
  private readonly failures: ProofFailures;
  private readonly nowSeconds: () => number;

  constructor({ database, tempo, failures = ProofFailures.uncounted, nowSeconds = () => Math.floor(Date.now() / 1000) }: AgentDirectoryServiceOptions) {
    this.database = database;
    this.tempo = tempo;
    this.failures = failures;
    this.nowSeconds = nowSeconds;
  }

  /**
   * Registers the identifier of `X-Agent-Identifier`, or replaces its profile, once the request is
   * proven by the identity's key. Refusals: 400 (identifier form, a Solana key that contradicts a
   * Solana identity), 401 (`PROOF_MISSING`, `PROOF_STALE`, `PROOF_INVALID`, `PROOF_REPLAYED`).
   */
  async register(request: RegistrationRequest): Promise<{ registration: AgentRegistrationRow; created: boolean }> {
    // A redeemed fee answers the registration it made, before the proof: the replay store would
    // refuse the signature the (byte-identical) request repeats, and the row under this fee passed
    // the proof when it was written. Nothing is written twice: the upsert would only move
    // `updated_at` and turn a 201 into a 200 (it writes nothing on chain).
    if (request.redeemed) {
      const earlier = await store.findByFeePayment(this.database.db, request.feePaymentId);
      if (earlier) return { registration: earlier.row, created: earlier.created };
    }
    const sent = request.headers.get(IDENTIFIER_HEADER);
    if (!sent) throw proofError('PROOF_MISSING', `${IDENTIFIER_HEADER} is required`, IDENTIFIER_HEADER);
    const identity = parseRegistrableIdentifier(sent);
    if (!identity) throw badRequest(IDENTIFIER_HEADER, IDENTIFIER_RULE);

    const { profile } = request;
    if (identity.kind === 'solana' && profile.solanaPublicKey !== null && profile.solanaPublicKey !== identity.publicKey) {
      throw badRequest('solana_public_key', "must be left out (or equal the identifier's key) for a Solana identity");
    }

    const headers = readProofHeaders(request.headers);
    if (!headers.ok) throw proofError(headers.code, headers.reason);
    // The message signs the identifier as sent; it is stored in its canonical spelling.
    const proofRequest: ProofRequest = {
      identifier: sent,
      method: request.method,
      pathWithQuery: request.pathWithQuery,
      timestamp: headers.timestamp,
      body: request.body,
    };
    const owner = await this.prove(identity, proofRequest, headers.signature, request.feePaymentId);

    let linkedKey: string | null = identity.kind === 'solana' ? identity.publicKey : null;
    if (identity.kind !== 'solana' && profile.solanaPublicKey !== null) {
      await this.proveLink(identity, proofRequest, request.headers, profile.solanaPublicKey, request.feePaymentId);
      linkedKey = profile.solanaPublicKey;
    }

    const { row, created } = await store.upsertRegistration(this.database.db, {
      identifier: identity.canonical,
      displayName: profile.displayName,
      description: profile.description,
      erc8004AgentId: identity.kind === 'erc8004' ? identity.agentId.toString() : null,
      solanaPublicKey: linkedKey,
      ownerAddress: owner,
      capabilities: profile.capabilities,
      feePaymentId: request.feePaymentId,
    });
    return { registration: row, created };
  }

  /** A registration by its canonical identifier (any accepted spelling); null when unregistered or not a registrable form. */
  findByIdentifier(identifier: string): Promise<AgentRegistrationRow | null> {
    const identity = parseRegistrableIdentifier(identifier);
    return identity ? store.findByIdentifier(this.database.db, identity.canonical) : Promise.resolve(null);
  }

  /**
   * The other identity of a registered agent that proved both (an ERC-8004 agent with a linked
   * Solana key): reputation summaries then cover both chains.
   */
  async linkedIdentity(address: { kind: 'solana'; key: string } | { kind: 'erc8004'; agentId: bigint }): Promise<{ solana: string; erc8004AgentId: bigint } | null> {
    const row = await store.findLinkedRegistration(
      this.database.db,
      address.kind === 'solana' ? { solanaPublicKey: address.key } : { erc8004AgentId: address.agentId.toString() },
    );
    return row?.solanaPublicKey && row.erc8004AgentId ? { solana: row.solanaPublicKey, erc8004AgentId: BigInt(row.erc8004AgentId) } : null;
  }

  /** A registration by its id (uuid) or by its identifier; null when unknown. */
  profile(idOrIdentifier: string): Promise<AgentRegistrationRow | null> {
    return UUID.test(idOrIdentifier) ? store.findById(this.database.db, idOrIdentifier.toLowerCase()) : this.findByIdentifier(idOrIdentifier);
  }

  /** One page of the directory, newest first; `after` is the previous page's last position. */
  directory(query: { nameContains: string | null; capability: string | null; limit: number; after: DirectoryPosition | null }) {
    return store.listRegistrations(this.database.db, query);
  }

  /** Verifies the identity's proof and claims its signature; answers the owner address to store (EVM identities). */
  private async prove(identity: RegistrableIdentity, request: ProofRequest, signature: string, feePaymentId: string): Promise<Address | null> {
    let owner: Address | null = null;
    let ownerRead = false;
    let scheme: ProofScheme;
    switch (identity.kind) {
      case 'erc8004':
        // The current owner on the identity registry signs (read once, only after the window check).
        scheme = {
          kind: 'erc8004',
          agentId: identity.agentId,
          ownerOf: async (agentId) => {
            ownerRead = true;
            owner = await this.tempo.agentOwner(agentId);
            return owner;
          },
        };
        break;
      case 'evm':
        owner = getAddress(identity.address);
        scheme = { kind: 'evm', address: owner };
        break;
      case 'solana':
        scheme = { kind: 'ed25519', publicKey: identity.publicKey };
        break;
    }
    const result = await verifyProof(request, signature, scheme, {
      nowSeconds: this.nowSeconds(),
      claimOnce: signatureClaimer(this.database.db, identity.canonical, feePaymentId),
    });
    if (!result.ok) {
      if (identity.kind === 'erc8004' && ownerRead && owner === null) {
        throw await this.failures.refusal(identity.canonical, proofError('PROOF_INVALID', `ERC-8004 agent ${identity.agentId} is not registered on the Tempo identity registry`, IDENTIFIER_HEADER));
      }
      throw await this.failures.refusal(identity.canonical, proofError(result.code, result.reason));
    }
    return owner;
  }

  /** The linked Solana key's consent: its Ed25519 signature (`X-Agent-Solana-Signature`) over the same request. */
  private async proveLink(identity: RegistrableIdentity, request: ProofRequest, headers: Headers, publicKey: string, feePaymentId: string): Promise<void> {
    const signature = headers.get(LINK_SIGNATURE_HEADER)?.trim();
    if (!signature) {
      throw proofError('PROOF_MISSING', `${LINK_SIGNATURE_HEADER} is required to link solana_public_key: the key's Ed25519 signature of this request`, LINK_SIGNATURE_HEADER);
    }
    const result = await verifyProof(request, signature, { kind: 'ed25519', publicKey }, {
      nowSeconds: this.nowSeconds(),
      claimOnce: signatureClaimer(this.database.db, identity.canonical, feePaymentId),
    });
    if (!result.ok) {
      const reason = result.code === 'PROOF_STALE' ? result.reason : result.reason.replace('X-Agent-Signature', LINK_SIGNATURE_HEADER);
      throw await this.failures.refusal(identity.canonical, proofError(result.code, reason, result.code === 'PROOF_STALE' ? 'X-Agent-Timestamp' : LINK_SIGNATURE_HEADER));
    }
  }
}
