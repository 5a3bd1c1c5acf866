/**
 * The price table of spec 4.2 (and `POST /api/mpp/agents/register`, spec 4.6), in one place.
 * A route is paid exactly when it is listed here; the gate and the OpenAPI document read it.
 */

/** A: MPP on Tempo (eip155:4217). B: x402 on Base (eip155:8453). C: x402 on Solana. */
export type Rail = 'A' | 'B' | 'C';
/** What one price buys: one call, one second of a stream (a tick), or one session. */
export type PriceUnit = 'charge' | 'tick' | 'session';
/**
 * `reads`: the handler changes nothing; the fee is settled after it answers, and a settlement that
 * fails withholds the answer. `acts`: the handler moves money or changes state; the fee is settled
 * before it runs, so nothing happens without a collected fee (docs/decisions.md, "Charge before acting").
 */
export type RouteEffect = 'reads' | 'acts';

export interface PaidRoute {
  method: 'GET' | 'POST';
  /** OpenAPI path, e.g. /api/mpp/escrow/{id}/status. */
  path: string;
  /** USD in 6-decimal base units. */
  price: bigint;
  rails: readonly Rail[];
  unit: PriceUnit;
  /** Spec 4.1.5: a card charge is offered next to rail A (payroll execute, bridge offramp). */
  card: boolean;
  effect: RouteEffect;
  /** A route whose JSON body's `action` decides: these actions act, the others read (`effect`). */
  actingActions?: readonly string[];
  summary: string;
}

const ALL: readonly Rail[] = ['A', 'B', 'C'];
const A_ONLY: readonly Rail[] = ['A'];
const X402_ONLY: readonly Rail[] = ['B', 'C'];
const usd = (cents: number) => BigInt(cents) * 10_000n; // 1 cent = 10,000 base units
const usdMills = (mills: number) => BigInt(mills) * 1_000n; // 0.001 USD = 1,000 base units

const route = (
  method: PaidRoute['method'],
  path: string,
  price: bigint,
  rails: readonly Rail[],
  effect: RouteEffect,
  summary: string,
  options: { unit?: PriceUnit; card?: boolean; actingActions?: readonly string[] } = {},
): PaidRoute => ({
  method,
  path,
  price,
  rails,
  unit: options.unit ?? 'charge',
  card: options.card ?? false,
  effect,
  ...(options.actingActions ? { actingActions: options.actingActions } : {}),
  summary,
});

/** Every paid route by name: handlers register `PAID.agentPay`, not a method and path looked up. */
export const PAID = {
  yieldRates: route('GET', '/api/mpp/treasury/yield-rates', usd(1), ALL, 'reads', 'Treasury yield rates'),
  payrollExecute: route('POST', '/api/mpp/payroll/execute', usd(100), A_ONLY, 'acts', 'Execute a prepared payroll run', { card: true }),
  employeeAdvance: route('POST', '/api/mpp/employee/advance', usd(50), A_ONLY, 'acts', "Claim an employee's accrued wages"),
  complianceCheck: route('POST', '/api/mpp/compliance/check', usd(5), ALL, 'reads', 'Screen a wallet (sanctions and blocklists)'),
  balanceStream: route('GET', '/api/mpp/employee/balance/stream', usdMills(1), A_ONLY, 'reads', 'Live salary balance (SSE), billed per tick', { unit: 'tick' }),
  payslip: route('GET', '/api/mpp/payslips/{runId}/{employeeId}', usd(2), A_ONLY, 'reads', 'A payslip'),
  memoDecode: route('POST', '/api/mpp/memo/decode', usd(1), ALL, 'reads', 'Decode a payroll memo'),
  employeeHistory: route('GET', '/api/mpp/employee/{id}/history', usd(5), A_ONLY, 'reads', "An employee's payment history"),
  bridgeOfframp: route('POST', '/api/mpp/bridge/offramp', usd(25), A_ONLY, 'acts', 'Cash out to a bank account', { card: true }),
  treasuryOptimize: route('POST', '/api/mpp/treasury/optimize', usd(10), A_ONLY, 'reads', 'Treasury optimisation advice', { unit: 'session' }),
  complianceList: route('GET', '/api/mpp/marketplace/compliance-list/{employerId}', usd(50), A_ONLY, 'reads', "An employer's compliance-cleared wallets"),
  escrowPost: route('POST', '/api/mpp/escrow/post', usd(10), ALL, 'acts', 'Post an escrow for agent work'),
  escrowDeliver: route('POST', '/api/mpp/escrow/deliver', usd(2), ALL, 'acts', 'Deliver escrowed work'),
  escrowDeliverSigned: route('POST', '/api/mpp/escrow/deliver-signed', usd(2), A_ONLY, 'acts', 'Deliver escrowed work with a signed transaction'),
  escrowStatus: route('GET', '/api/mpp/escrow/{id}/status', usd(1), ALL, 'reads', 'Escrow status'),
  agentPay: route('POST', '/api/mpp/agent/pay', usd(5), ALL, 'acts', 'Agent-to-agent payment from an employer treasury'),
  treasurySession: route('POST', '/api/mpp/agent/session/treasury', usd(2), A_ONLY, 'reads', 'Treasury session actions', { unit: 'session', actingActions: ['rebalance'] }),
  streamOpen: route('POST', '/api/x402/streams', usd(5), X402_ONLY, 'acts', 'Open a payroll stream on Solana'),
  agentRegister: route('POST', '/api/mpp/agents/register', usd(10), ALL, 'acts', 'Register an agent'),
} as const satisfies Record<string, PaidRoute>;

/** Every paid route, as a list. */
export const PRICE_TABLE: readonly PaidRoute[] = Object.values(PAID);

/** Stripe's minimum charge: a card offer below it cannot be made (RECIPES.md). */
export const CARD_MINIMUM = usd(50);

/** A paid route as payments, receipts and card credits name it: `METHOD /path`. */
export const routeName = (route: Pick<PaidRoute, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** The paid route at this method and path, for callers that hold only those (MCP tools). */
export function findPaidRoute(method: string, path: string): PaidRoute | undefined {
  return PRICE_TABLE.find((r) => r.method === method && r.path === path);
}
