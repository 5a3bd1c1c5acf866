import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { AppError } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, rateLimitedContent } from '../../http/validation.js';
import { formatUsd, parseUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { SignedAgentRequest } from '../agents/index.js';
import {
  AgentHeaders,
  DecideBody,
  DeliverBody,
  DeliverResult,
  DeliverSignedBody,
  EmployerEscrow,
  EmployerEscrowList,
  EmployerEscrowParams,
  EmployerParams,
  EscrowIdParams,
  EscrowStatus,
  PostEscrowBody,
  PostEscrowResult,
} from './schema.js';
import { publicSignatures, type EscrowService } from './service.js';
import type { EscrowRow } from './store.js';

export interface EscrowRouteDeps {
  escrow: EscrowService;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  requireUser: MiddlewareHandler<AppEnv>;
  /** An explorer link for a Solana signature. */
  solanaExplorerUrl: (signature: string) => string;
}

type Gate = EscrowRouteDeps['gate'];
type ExplorerUrl = EscrowRouteDeps['solanaExplorerUrl'];

// Steps whose signature is a Solana transaction (the others are Tempo tx hashes).
const SOLANA_STEPS = new Set(['initialize', 'deliverable', 'submit_deliverable', 'settle', 'refund']);

const agentErrors = {
  401: jsonContent(ErrorSchema, '`AGENT_IDENTIFIER_MISSING`, or the identity proof refused (`PROOF_*`).'),
  429: rateLimitedContent('too many refused identity proofs for this X-Agent-Identifier (a valid proof is still accepted)'),
};

const deliverErrors = {
  401: jsonContent(ErrorSchema, '`AGENT_IDENTIFIER_MISSING`, or the worker\'s identity proof refused: `PROOF_MISSING`, `PROOF_STALE`, `PROOF_INVALID`, `PROOF_REPLAYED`, or `PROOF_UNAVAILABLE` (an identifier that names no key and has no authorization of the employer).'),
  429: rateLimitedContent('too many refused identity proofs for this X-Agent-Identifier (a valid proof is still accepted)'),
  403: jsonContent(ErrorSchema, '`AGENT_MISMATCH` (not the escrow\'s worker) or `ESCROW_EXPIRED`. The fee is kept.'),
  404: jsonContent(ErrorSchema, '`ESCROW_NOT_FOUND`.'),
  409: jsonContent(ErrorSchema, '`ESCROW_ALREADY_DELIVERED`: a deliverable is accepted once.'),
  422: jsonContent(ErrorSchema, '`DELIVERABLE_UNREACHABLE` (timeout after 10 s, HTTP error, network) or `DELIVERABLE_TOO_LARGE` (over 100 KB).'),
};

// The paid routes: the gate (their first middleware) is the one runtime part.
const postEscrowRoute = (gate: Gate) =>
  createRoute(
    paidRoute(PAID.escrowPost, gate, {
      request: { headers: AgentHeaders, body: jsonBody(PostEscrowBody) },
      description:
        "Locks up to 100.00 USDC of the employer's treasury in a Solana escrow vault for a worker agent, judged against the rubric on delivery. The poster must be an agent authorized for the employer (with its identity proof); pause, per-tx cap, rolling 24 h cap and velocity apply as on agent/pay. Expiry is shortened for workers with a reputation (docs/decisions.md). Answers below 500 keep the fee.",
      responses: {
        200: jsonContent(PostEscrowResult, 'Posted: the funds are in the vault.'),
        ...errorResponses(400, 413, 415),
        ...agentErrors,
        403: jsonContent(ErrorSchema, '`AGENT_NOT_AUTHORIZED`, `AGENT_PAUSED`, `PER_TX_CAP_EXCEEDED`, `PER_DAY_CAP_EXCEEDED`, `VELOCITY_EXCEEDED`. The fee is kept.'),
        422: jsonContent(ErrorSchema, '`INSUFFICIENT_TREASURY_BALANCE` or `TREASURY_NOT_DELEGATED`: nothing was locked.'),
        502: jsonContent(ErrorSchema, '`ESCROW_FUNDING_FAILED` (nothing locked) or `ESCROW_FUNDING_PENDING` (finishes within minutes; `escrow_id` in the body). Not charged.'),
        503: jsonContent(ErrorSchema, '`ESCROW_CUSTODY_UNAVAILABLE`: the service cannot take this amount into custody now (its Solana float, or live mode without SOLANA_ESCROW_PROGRAM_ID); nothing was debited. Not charged.'),
      },
    }),
  );

const deliverRoute = (gate: Gate) =>
  createRoute(
    paidRoute(PAID.escrowDeliver, gate, {
      request: { headers: AgentHeaders, body: jsonBody(DeliverBody) },
      description:
        'The worker delivers: the content is fetched once (10 s, 100 KB, no private or loopback addresses at any hop), hashed, recorded on chain, and judged in the background; poll the status route. The worker always proves its identifier (docs/api.md "Agent identity proof"): by its authorization with the employer, else by the key the identifier names (ERC-8004 owner, EVM address, Solana key); an identifier with neither is 401 `PROOF_UNAVAILABLE`.',
      responses: {
        200: jsonContent(DeliverResult, 'Accepted for judging.'),
        ...errorResponses(413, 415),
        400: jsonContent(ErrorSchema, 'A field is invalid, or `DELIVERABLE_URI_REFUSED` (scheme, syntax, or a forbidden address).'),
        ...deliverErrors,
      },
    }),
  );

const deliverSignedRoute = (gate: Gate) =>
  createRoute(
    paidRoute(PAID.escrowDeliverSigned, gate, {
      request: { headers: AgentHeaders, body: jsonBody(DeliverSignedBody) },
      description:
        "For workers holding their own key: a signed transaction with one submit_deliverable instruction for the escrow program (uri_hash = SHA-256 of deliverable_uri, the worker wallet as fee payer and signer). Checked, broadcast once the content is fetched, then judged like deliver. The transaction proves the worker wallet; a worker_agent_identifier other than that wallet's own key (solana:<wallet>) also needs the identity proof headers, as on deliver.",
      responses: {
        200: jsonContent(DeliverResult, 'Broadcast and accepted for judging.'),
        ...errorResponses(413, 415),
        400: jsonContent(
          ErrorSchema,
          'A field is invalid; `TRANSACTION_INVALID`, `SIGNATURE_MISSING`, `SIGNATURE_INVALID`, `INSTRUCTION_MISSING`, `INSTRUCTION_INVALID`, `URI_HASH_MISMATCH`, `ESCROW_MISMATCH`, `ESCROW_ACCOUNT_MISMATCH`, or `DELIVERABLE_URI_REFUSED`.',
        ),
        ...deliverErrors,
        403: jsonContent(ErrorSchema, '`FEE_PAYER_MISMATCH`, `AGENT_MISMATCH` or `ESCROW_EXPIRED`. The fee is kept.'),
        502: jsonContent(ErrorSchema, '`BROADCAST_FAILED`: the transaction did not land. Not charged.'),
        503: jsonContent(ErrorSchema, '`DELIVER_SIGNED_UNAVAILABLE`: no escrow program configured (live mode without SOLANA_ESCROW_PROGRAM_ID).'),
      },
    }),
  );

const statusRoute = (gate: Gate) =>
  createRoute(
    paidRoute(PAID.escrowStatus, gate, {
      request: { params: EscrowIdParams },
      description: 'Public fields only (spec 2.1): no judge model, no content hash, no employer.',
      responses: {
        200: jsonContent(EscrowStatus, 'The escrow.'),
        400: jsonContent(ErrorSchema, '`id` is not a UUID.'),
        404: jsonContent(ErrorSchema, '`ESCROW_NOT_FOUND`.'),
      },
    }),
  );

// The owner's routes (their middleware, requireUser, is added where they are mounted).
const ownerRoute = { tags: ['Escrow'], security: [{ bearerAuth: [] }] };

const listForOwner = createRoute({
  ...ownerRoute,
  method: 'get',
  path: '/api/employers/{employer_id}/escrows',
  summary: "The employer's escrows, newest first (owner)",
  request: { params: EmployerParams },
  responses: { 200: jsonContent(EmployerEscrowList, 'At most 200.'), ...errorResponses(400, 401, 404) },
});

const decide = createRoute({
  ...ownerRoute,
  method: 'post',
  path: '/api/employers/{employer_id}/escrows/{id}/decision',
  summary: 'Decide an escalated escrow (owner)',
  description: 'When the judge gave no verdict to act on (unparseable, or below the confidence threshold), the employer decides; the payout follows.',
  request: { params: EmployerEscrowParams, body: jsonBody(DecideBody) },
  responses: {
    200: jsonContent(EmployerEscrow, 'Decided; settlement or refund follows within seconds.'),
    ...errorResponses(400, 401, 404, 413, 415),
    409: jsonContent(ErrorSchema, '`ESCROW_NOT_ESCALATED`: the escrow does not await a decision.'),
  },
});

/** Spec 4.4's escrow routes, and the employer's view and decision on escalated escrows. */
export function escrowRoutes(deps: EscrowRouteDeps): FeatureApp {
  const { escrow, gate, solanaExplorerUrl: explorer } = deps;
  const owner = { middleware: deps.requireUser };
  return featureApp()
    .openapi(postEscrowRoute(gate), onPost(escrow, explorer))
    .openapi(deliverRoute(gate), async (c) => {
      const identifier = requireIdentifier(c);
      const body = c.req.valid('json');
      const row = await escrow.deliver({
        identifier,
        escrowId: body.escrow_id,
        deliverableUri: body.deliverable_uri,
        proof: await signedRequest(c),
        feePaymentId: c.var.payment.id,
        redeemed: c.var.payment.redeemed,
      });
      return c.json(presentDelivery(row), 200);
    })
    .openapi(deliverSignedRoute(gate), async (c) => {
      const identifier = requireIdentifier(c);
      const body = c.req.valid('json');
      const row = await escrow.deliverSigned({
        identifier,
        escrowId: body.escrow_id,
        deliverableUri: body.deliverable_uri,
        signedTransaction: body.signed_transaction,
        proof: await signedRequest(c),
        feePaymentId: c.var.payment.id,
        redeemed: c.var.payment.redeemed,
      });
      return c.json(presentDelivery(row), 200);
    })
    .openapi(statusRoute(gate), async (c) => c.json(presentStatus(await escrow.publicStatus(c.req.valid('param').id), explorer), 200))
    .openapi({ ...listForOwner, ...owner }, async (c) => {
      const rows = await escrow.listForOwner(c.var.caller!, c.req.valid('param').employer_id);
      return c.json(
        rows.map((row) => presentForEmployer(row, explorer)),
        200,
      );
    })
    .openapi({ ...decide, ...owner }, async (c) => {
      const { employer_id, id } = c.req.valid('param');
      const body = c.req.valid('json');
      return c.json(presentForEmployer(await escrow.decide(c.var.caller!, employer_id, id, body.verdict, body.reasoning), explorer), 200);
    });
}

const onPost =
  (escrow: EscrowService, explorer: ExplorerUrl): RouteHandler<ReturnType<typeof postEscrowRoute>, AppEnv> =>
  async (c) => {
    const identifier = requireIdentifier(c);
    const body = c.req.valid('json');
    const row = await escrow.post({
      identifier,
      employerId: body.employer_id,
      workerWalletAddress: body.worker_wallet_address,
      workerAgentIdentifier: body.worker_agent_identifier,
      amount: parseUsd(body.amount_usdc)!,
      rubricPrompt: body.rubric_prompt,
      expiryHours: body.expiry_hours ?? 24,
      proof: await signedRequest(c),
      feePaymentId: c.var.payment.id,
      redeemed: c.var.payment.redeemed,
    });
    c.var.payment.attribute(body.employer_id);
    const signatures = publicSignatures(row);
    return c.json(
      {
        escrow_id: row.id,
        escrow_pda: row.escrowPda!,
        status: 'posted' as const,
        expires_at: row.expiresAt.toISOString(),
        initialize_signature: signatures.initialize!,
        solana_explorer_urls: explorerUrls(row, explorer),
        applied_expiry_hours: row.appliedExpiryHours,
        requested_expiry_hours: row.requestedExpiryHours,
        worker_reputation_tier: row.workerReputationTier,
        worker_attestation_count: row.workerAttestationCount,
      },
      200,
    );
  };

function explorerUrls(row: EscrowRow, explorer: ExplorerUrl) {
  return Object.fromEntries(
    Object.entries(publicSignatures(row))
      .filter(([step]) => SOLANA_STEPS.has(step))
      .map(([step, signature]) => [step, explorer(signature)]),
  );
}

function presentStatus(row: EscrowRow, explorer: ExplorerUrl) {
  return {
    escrow_id: row.id,
    status: row.status as 'posted' | 'delivered' | 'validating' | 'settled' | 'rejected_refunded' | 'expired_refunded',
    amount_usdc: formatUsd(row.amount),
    worker_wallet_address: row.workerWalletAddress,
    rubric_prompt: row.rubricPrompt,
    deliverable_uri: row.deliverableUri,
    validator_verdict: row.validatorVerdict,
    validator_confidence: row.validatorConfidence,
    validator_reasoning: row.validatorReasoning,
    expires_at: row.expiresAt.toISOString(),
    signatures: publicSignatures(row),
    solana_explorer_urls: explorerUrls(row, explorer),
  };
}

function presentForEmployer(row: EscrowRow, explorer: ExplorerUrl) {
  return {
    ...presentStatus(row, explorer),
    worker_agent_identifier: row.workerAgentIdentifier,
    poster_agent_identifier: row.posterAgentIdentifier,
    escalated_at: row.escalatedAt?.toISOString() ?? null,
    escalation_reason: row.escalationReason,
    validator_model: row.validatorModel,
    sanitizer_flagged: row.sanitizerFlagged,
    created_at: row.createdAt.toISOString(),
  };
}

function presentDelivery(row: EscrowRow) {
  return {
    escrow_id: row.id,
    status: row.status as 'delivered' | 'validating',
    deliverable_uri: row.deliverableUri!,
    content_sha256: row.deliverableSha256!,
    content_bytes: row.deliverableContent?.length ?? 0,
    signatures: publicSignatures(row),
  };
}

function requireIdentifier(c: Context<AppEnv>): string {
  const identifier = c.req.header('X-Agent-Identifier');
  if (!identifier) throw new AppError('AGENT_IDENTIFIER_MISSING', 'X-Agent-Identifier is required.', { field: 'X-Agent-Identifier' });
  return identifier;
}

async function signedRequest(c: Context<AppEnv>): Promise<SignedAgentRequest> {
  const url = new URL(c.req.url);
  return {
    method: c.req.method,
    pathWithQuery: url.pathname + url.search,
    headers: c.req.raw.headers,
    body: new Uint8Array(await c.req.arrayBuffer()),
    feePaymentId: c.var.payment.id,
  };
}
