import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Database } from '../../db/client.js';
import { AppError, type CodeWithStatus } from '../../errors.js';
import { parseAgentIdentifier } from './identifiers.js';
import { ProofFailures } from './proof-failures.js';
import { readProofHeaders, verifyProof, type ProofScheme } from './identity-proof.js';
import type { AgentsService } from './service.js';
import { signatureClaimer } from './signature-replays.js';
import * as agentsStore from './store.js';
import type { AuthorizationRow } from './store.js';

/** A request as it was sent, for the identity proof (method and URL are signed with the body). */
export interface SignedAgentRequest {
  method: string;
  pathWithQuery: string;
  headers: Headers;
  body: Uint8Array;
  /** The fee of the paid call it came with (`c.var.payment.id`): see `signatureClaimer`. */
  feePaymentId?: string | null;
}

/**
 * Checks the identity proof of an agent's request (spec 5 point 2): against the scheme of the
 * agent's authorization, or, for an agent with none here (an escrow worker), against the key its
 * identifier names. Every identifier proves itself: one that cannot is refused, never trusted.
 * A refusal is a 401 naming the proof header.
 */
export interface AgentRequestVerifierOptions {
  database: Database;
  agents: AgentsService;
  tempo: TempoChain;
  /** Counts refused proofs per identifier (429 past the limit); default: uncounted. */
  failures?: ProofFailures;
}

export class AgentRequestVerifier {
  private readonly database: Database;
  private readonly agents: AgentsService;
  private readonly tempo: TempoChain;
  private readonly failures: ProofFailures;

  constructor({ database, agents, tempo, failures = ProofFailures.uncounted }: AgentRequestVerifierOptions) {
    this.database = database;
    this.agents = agents;
    this.tempo = tempo;
    this.failures = failures;
  }

  /** Proof by the scheme the employer configured for this authorization. */
  async verifyAuthorized(authorization: AuthorizationRow, identifier: string, request: SignedAgentRequest): Promise<void> {
    await this.verify(identifier, request, await this.schemeOf(authorization));
  }

  /**
   * Proof for an agent the employer may not have authorized (an escrow's worker): by its
   * authorization's scheme when it has one with this employer, else by its identifier's own key.
   */
  async verifyForEmployer(employerId: string, identifier: string, request: SignedAgentRequest): Promise<void> {
    const authorization = await agentsStore.findActiveByIdentifier(this.database.db, employerId, identifier);
    if (authorization) await this.verifyAuthorized(authorization, identifier, request);
    else await this.verifySelfCertifying(identifier, request);
  }

  /**
   * Proof by the identifier's own key: an ERC-8004 agent's current owner, an EVM address, or a
   * Solana key. An identifier that names no key (an opaque token, an agent-card URI) cannot prove
   * itself: 401 `PROOF_UNAVAILABLE`.
   */
  private async verifySelfCertifying(identifier: string, request: SignedAgentRequest): Promise<void> {
    const scheme = this.selfCertifyingScheme(identifier);
    if (!scheme) {
      throw unauthenticated('PROOF_UNAVAILABLE', 'this X-Agent-Identifier names no key to sign with (an EVM address, erc8004:... or a Solana key), and no authorization of the employer gives it an HMAC secret');
    }
    await this.verify(identifier, request, scheme);
  }

  private async verify(identifier: string, request: SignedAgentRequest, scheme: ProofScheme): Promise<void> {
    const headers = readProofHeaders(request.headers);
    if (!headers.ok) throw unauthenticated(headers.code, headers.reason);
    // Real time, not the service clock: X-Agent-Timestamp comes from the agent's own clock.
    const result = await verifyProof(
      { identifier: request.headers.get('X-Agent-Identifier') ?? identifier, method: request.method, pathWithQuery: request.pathWithQuery, timestamp: headers.timestamp, body: request.body },
      headers.signature,
      scheme,
      { nowSeconds: Math.floor(Date.now() / 1000), claimOnce: signatureClaimer(this.database.db, identifier, request.feePaymentId ?? null) },
    );
    if (!result.ok) throw await this.failures.refusal(identifier, unauthenticated(result.code, result.reason));
  }

  private selfCertifyingScheme(identifier: string): ProofScheme | null {
    const identity = parseAgentIdentifier(identifier);
    if (identity.kind === 'erc8004') return { kind: 'erc8004', agentId: identity.agentId, ownerOf: (id) => this.tempo.agentOwner(id) };
    if (identity.kind === 'evm') return { kind: 'evm', address: identity.address };
    if (identity.kind === 'solana') return { kind: 'ed25519', publicKey: identity.publicKey };
    return null;
  }

  private async schemeOf(authorization: AuthorizationRow): Promise<ProofScheme> {
    if (authorization.identityScheme === 'hmac') return { kind: 'hmac', secret: await this.agents.hmacSecret(authorization) };
    const scheme = this.selfCertifyingScheme(authorization.agentIdentifier);
    if (scheme?.kind === authorization.identityScheme) return scheme;
    // Only the schemes above can be created; anything else cannot prove itself.
    throw new AppError('AGENT_NOT_AUTHORIZED', 'This authorization has no usable identity proof; the owner must re-create it.');
  }
}

const unauthenticated = (code: CodeWithStatus<401>, reason: string) => new AppError(code, `Agent identity proof refused: ${reason}.`, { field: 'X-Agent-Signature' });
