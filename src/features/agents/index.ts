/** The agents feature's public face: what the app mounts and what other features may use. */
export { agentRoutes } from './routes.js';
export type { AgentPayService } from './pay.js';
export type { AgentsService } from './service.js';
// Used by other features today (agent-directory, escrow, reputation, payroll, mcp).
export { AGENT_IDENTIFIER_PATTERN, AgentPayBody, withEvmAddressRule } from './schema.js';
export { isSolanaKey, normaliseIdentifier, parseAgentId, parseAgentIdentifier, type AgentIdentity } from './identifiers.js';
export { ed25519Verify, readProofHeaders, verifyProof, type ProofFailure, type ProofRequest, type ProofScheme } from './identity-proof.js';
export { ProofFailures } from './proof-failures.js';
export type { AgentRequestVerifier, SignedAgentRequest } from './request-proof.js';
export { signatureClaimer } from './signature-replays.js';
export { identityOf, SpendReservations } from './spend.js';
/** reputation's `escrowPayer` reads an employer's agents (revoked included) inside its transaction. */
export { listAuthorizations } from './store.js';
