import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * Every machine code an error answer can carry (`{"error": "<sentence>", "code": "<CODE>"}`), its
 * HTTP status and what it tells the caller. `AppError` takes its status from here, so a code has one
 * status everywhere; services throw these without knowing about HTTP (src/http/errors.ts answers them).
 */
export const ERRORS = {
  // 400: the request itself is wrong
  VALIDATION_ERROR: { status: 400, meaning: 'A field is missing or malformed; `field` names it.' },
  INVALID_JSON: { status: 400, meaning: 'The body is not valid JSON.' },
  BAD_REQUEST: { status: 400, meaning: 'The request could not be read (a framework-level refusal).' },
  INVALID_CLIENT: { status: 400, meaning: 'OAuth: the client_id is not registered.' },
  INVALID_REDIRECT_URI: { status: 400, meaning: 'OAuth: the redirect_uri is not one the client registered.' },
  DELIVERABLE_URI_REFUSED: { status: 400, meaning: 'Escrow: the deliverable URI points somewhere the service will not fetch (private, loopback, bad scheme).' },
  TRANSACTION_INVALID: { status: 400, meaning: 'Escrow signed delivery: the signed transaction cannot be decoded.' },
  SIGNATURE_MISSING: { status: 400, meaning: "Escrow signed delivery: the worker's signature is missing." },
  SIGNATURE_INVALID: { status: 400, meaning: "Escrow signed delivery: the worker's signature does not verify." },
  INSTRUCTION_MISSING: { status: 400, meaning: 'Escrow signed delivery: the transaction holds no submit_deliverable instruction of the escrow program.' },
  INSTRUCTION_INVALID: { status: 400, meaning: 'Escrow signed delivery: the submit_deliverable instruction is malformed.' },
  ESCROW_MISMATCH: { status: 400, meaning: 'Escrow signed delivery: the instruction names another escrow.' },
  ESCROW_ACCOUNT_MISMATCH: { status: 400, meaning: "Escrow signed delivery: the instruction's escrow account is not this escrow's." },
  URI_HASH_MISMATCH: { status: 400, meaning: "Escrow signed delivery: the instruction's hash is not the hash of deliverable_uri." },

  // 401: who is calling is unknown or unproven
  UNAUTHENTICATED: { status: 401, meaning: 'No valid identity token or agent key was sent.' },
  UNAUTHORIZED: { status: 401, meaning: 'The bearer token of an operations endpoint is missing or wrong.' },
  AGENT_IDENTIFIER_MISSING: { status: 401, meaning: 'An agent route was called without X-Agent-Identifier.' },
  PROOF_MISSING: { status: 401, meaning: "The agent's identity proof headers are missing." },
  PROOF_INVALID: { status: 401, meaning: "The agent's identity proof does not verify." },
  PROOF_STALE: { status: 401, meaning: "The agent's proof timestamp is outside the allowed window." },
  PROOF_REPLAYED: { status: 401, meaning: "The agent's proof was already used." },
  PROOF_UNAVAILABLE: { status: 401, meaning: 'The agent identifier names no key and has no HMAC secret here: it cannot prove itself.' },

  // 402: payment
  PAYMENT_REQUIRED: { status: 402, meaning: 'The route is paid: pay one of the offered challenges and send the proof.' },
  PAYMENT_INVALID: { status: 402, meaning: 'The payment proof is malformed, for another route or amount, or does not verify.' },
  PAYMENT_ALREADY_USED: { status: 402, meaning: 'The payment proof was already spent on an earlier call.' },
  PAYMENT_RAIL_NOT_ACCEPTED: { status: 402, meaning: 'The route does not accept this payment rail.' },
  PAYMENT_SETTLEMENT_FAILED: { status: 402, meaning: 'The fee could not be settled; nothing was done and nothing was charged.' },

  // 403: known caller, not allowed
  FORBIDDEN: { status: 403, meaning: 'The caller lacks the role this route needs.' },
  ORIGIN_NOT_ALLOWED: { status: 403, meaning: 'MCP: the browser Origin is not allowed.' },
  HUMAN_OWNER_ONLY: { status: 403, meaning: 'Only the human employer owner may do this; agent credentials cannot.' },
  AGENT_NOT_AUTHORIZED: { status: 403, meaning: 'No active authorization lets this agent pay for this employer.' },
  ESCROW_EXPIRED: { status: 403, meaning: 'Escrow: it expired; nothing more is accepted.' },
  AGENT_MISMATCH: { status: 403, meaning: "Escrow: the calling agent is not the escrow's worker." },
  FEE_PAYER_MISMATCH: { status: 403, meaning: "Escrow: the signed transaction's fee payer is not the worker's wallet." },
  AGENT_PAUSED: { status: 403, meaning: 'Spend gate 1: the employer paused this agent.' },
  PER_TX_CAP_EXCEEDED: { status: 403, meaning: "Spend gate 2: the amount is above the authorization's per-payment cap." },
  PER_DAY_CAP_EXCEEDED: { status: 403, meaning: "Spend gate 3: the payment would take the agent past its rolling 24-hour cap." },
  VELOCITY_EXCEEDED: { status: 403, meaning: 'Spend gate 4: too many payments by this agent in the last minute.' },
  RECIPIENT_NOT_ALLOWED: { status: 403, meaning: "Spend gate 5: the recipient is not on the authorization's allowlist." },

  // 404, 405
  NOT_FOUND: { status: 404, meaning: 'No such thing, or it belongs to someone else (the answer is the same).' },
  ESCROW_NOT_FOUND: { status: 404, meaning: 'No such escrow for this caller.' },
  METHOD_NOT_ALLOWED: { status: 405, meaning: 'The path exists; the method does not (see Allow).' },

  // 409: the state does not allow it now
  ADVANCES_CHANGED: { status: 409, meaning: 'Payroll: advances netted into this run changed meanwhile; prepare it again.' },
  ADVANCE_IN_PROGRESS: { status: 409, meaning: 'Wages: an advance for this employee is already being claimed.' },
  AGENT_IDENTIFIER_TAKEN: { status: 409, meaning: 'The employer already has an active authorization for this agent.' },
  AMBIGUOUS_ADDRESS: { status: 409, meaning: 'Wages: several employees are paid to this address; name the employee.' },
  AUTHORIZATION_REVOKED: { status: 409, meaning: 'The agent authorization is revoked.' },
  CAP_NOT_HALVED: { status: 409, meaning: "The authorization's per-payment cap is not halved, so there is nothing to restore." },
  CREDIT_EMPTY: { status: 409, meaning: 'Card credit: nothing is left of it to refund.' },
  DECISION_NOT_PROPOSED: { status: 409, meaning: 'Payroll: the agent decision already ran or was rejected.' },
  EMPLOYEE_REMOVED: { status: 409, meaning: 'The employee was removed and can no longer be edited.' },
  ESCROW_ALREADY_DELIVERED: { status: 409, meaning: 'Escrow: a deliverable is accepted once, while the escrow is posted.' },
  ESCROW_NOT_ESCALATED: { status: 409, meaning: 'Escrow: only an escrow escalated to its employer takes a decision.' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, meaning: 'A request with this Idempotency-Key is still running.' },
  KYC_NOT_APPROVED: { status: 409, meaning: "Bridge: the employee's identity check is not approved yet." },
  MINING_IN_PROGRESS: { status: 409, meaning: "Virtual addresses: this employer's master registration is already mining." },
  NOT_AN_HMAC_AUTHORIZATION: { status: 409, meaning: 'The agent proves itself with a key, not a shared secret: there is nothing to rotate.' },
  RUN_NOT_DRAFT: { status: 409, meaning: 'Payroll: only a draft run can be submitted.' },
  STREAM_STOPPED: { status: 409, meaning: "Wages: the employee's wallet changed while the stream started; start it again." },
  STREAM_STOPPING: { status: 409, meaning: "Wages: the wallet's earlier stream is still being stopped; retry in a minute." },
  TX_HASH_IN_USE: { status: 409, meaning: 'Payroll: another run already recorded this transaction hash.' },
  VIRTUAL_MASTER_REGISTERED: { status: 409, meaning: 'Virtual addresses: the employer already registered its master.' },
  WALLET_STREAMED_BY_ANOTHER_EMPLOYER: { status: 409, meaning: 'Wages: the wallet already receives a stream from another employer.' },
  WALLET_REVIEW_REJECTED: { status: 409, meaning: "Wages: the employer rejected the employee's payout wallet." },
  WALLET_UNDER_REVIEW: { status: 409, meaning: "Wages: the employee's new payout wallet awaits the employer's review." },
  YIELD_SOURCES_CHANGED: { status: 409, meaning: 'Treasury: the yield sources changed while rebalancing; read them again.' },

  // 413, 415
  PAYLOAD_TOO_LARGE: { status: 413, meaning: 'The body is larger than MAX_BODY_BYTES.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'The body must be application/json.' },

  // 422: understood, but the money or the data does not allow it
  ADVANCES_EXCEED_PAY: { status: 422, meaning: "Payroll: employees' claimed advances exceed what this run pays them." },
  DECISION_INVALID: { status: 422, meaning: 'Payroll: the agent decision has no payments.' },
  DELIVERABLE_TOO_LARGE: { status: 422, meaning: 'Escrow: the deliverable is larger than the service fetches.' },
  DELIVERABLE_UNREACHABLE: { status: 422, meaning: 'Escrow: the deliverable could not be fetched.' },
  EMPLOYEE_NOT_PAYABLE: { status: 422, meaning: 'Payroll: some employees cannot be paid now (each with its reason).' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, meaning: 'The Idempotency-Key was used with a different request.' },
  INSUFFICIENT_BALANCE: { status: 422, meaning: "Bridge: the employee's wallet does not hold the amount beyond pending off-ramps." },
  INSUFFICIENT_TREASURY: { status: 422, meaning: "Payroll: the treasury's available balance does not cover the run." },
  INSUFFICIENT_TREASURY_BALANCE: { status: 422, meaning: "Agent pay: the employer's treasury does not cover the payment." },
  NO_WALLET: { status: 422, meaning: 'The employee has no wallet to pay, stream to or cash out from.' },
  NOTHING_ACCRUED: { status: 422, meaning: 'Wages: nothing has accrued since the last claim.' },
  STREAM_NEEDS_ADMIN_WALLET: { status: 422, meaning: "Wages: the employer administers its treasury itself; the stream must be started from that wallet." },
  NO_SALARY: { status: 422, meaning: 'Wages: the employee has no salary to stream or advance.' },
  PAYROLL_REVERTED: { status: 422, meaning: 'Payroll: the chain refused the batch; nothing was paid.' },
  POLICY_NOT_FOUND: { status: 422, meaning: 'Compliance: the TIP-403 policy does not exist.' },
  RECIPIENT_BLOCKED: { status: 422, meaning: 'Payroll: some recipient wallets are blocked (sanctions or the employer’s list).' },
  TREASURY_NOT_DELEGATED: { status: 422, meaning: "Agent pay: the service is not an agent of the employer's treasury account." },

  // 429
  RATE_LIMITED: { status: 429, meaning: 'Too many requests; see Retry-After.' },

  // 5xx: ours or an outside system's; a paid call's fee is given back
  INTERNAL_ERROR: { status: 500, meaning: 'An unexpected failure on our side; the log has the details.' },
  BRIDGE_INCONSISTENT: { status: 502, meaning: 'The fiat bridge no longer knows a record we hold.' },
  BROADCAST_FAILED: { status: 502, meaning: 'The transaction did not land.' },
  ESCROW_FUNDING_FAILED: { status: 502, meaning: 'Escrow: funding failed; nothing was locked.' },
  ESCROW_FUNDING_PENDING: { status: 502, meaning: 'Escrow: funding is not confirmed yet; it completes or is given back within minutes.' },
  PAYMENT_OUTCOME_UNKNOWN: { status: 502, meaning: 'The fee settlement was started but its outcome is not known yet; the reconciler settles or refunds it.' },
  TRANSFER_FAILED: { status: 502, meaning: 'Agent pay: the chain refused the transfer; nothing was paid.' },
  TRANSFER_OUTCOME_UNKNOWN: { status: 502, meaning: 'Agent pay: the transfer was sent but not confirmed; it settles or is released within minutes.' },
  DATABASE_BUSY: { status: 503, meaning: 'No database connection came free in time; try again after Retry-After.' },
  AI_NOT_CONFIGURED: { status: 503, meaning: 'No AI provider is configured on this server.' },
  BRIDGE_NOT_CONFIGURED: { status: 503, meaning: 'The fiat bridge is not configured on this server.' },
  BRIDGE_UNAVAILABLE: { status: 503, meaning: 'The fiat bridge is not answering; nothing was created.' },
  DELIVER_SIGNED_UNAVAILABLE: { status: 503, meaning: 'Escrow: no escrow program is configured for signed deliveries.' },
  ESCROW_CUSTODY_UNAVAILABLE: { status: 503, meaning: 'Escrow: custody cannot take this amount now; nothing was debited.' },
  SOLANA_AGENT_WALLET_NOT_CONFIGURED: { status: 503, meaning: 'Streams: the Solana agent wallet is not configured on this server.' },
  MINING_BUDGET_EXHAUSTED: { status: 504, meaning: 'Virtual addresses: no salt found within the budget; retry from nextStartNonce.' },
} as const satisfies Record<string, { status: ContentfulStatusCode; meaning: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** The codes whose status is `S`, e.g. the 400 codes `badRequest` may use. */
export type CodeWithStatus<S extends ContentfulStatusCode> = { [C in ErrorCode]: (typeof ERRORS)[C]['status'] extends S ? C : never }[ErrorCode];

/** The error envelope of every non-2xx JSON answer: `{"error": "<sentence>", "code": "<CODE>", ...details}`. */
export interface ErrorBody {
  error: string;
  code: string;
  [detail: string]: unknown;
}

/** A refusal with a catalogued code; its status comes from the catalog. */
export class AppError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }

  body(): ErrorBody {
    return { error: this.message, code: this.code, ...this.details };
  }
}

/** 404 that says the same whether the thing is missing or belongs to someone else. */
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found.`);

export const badRequest = (field: string, message: string, code: CodeWithStatus<400> = 'VALIDATION_ERROR') =>
  new AppError(code, `${field}: ${message}`, { field });
