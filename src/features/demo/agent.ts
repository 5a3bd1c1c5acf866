import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { Challenge, Receipt } from 'mppx';
import { Mppx, tempo } from 'mppx/client';
import { createClient, http, type Hex, type Transport } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import type { Chains } from '../../chains/index.js';
import type { Logger } from '../../log.js';
import { displayUsd, formatUsd } from '../../money.js';
import type { Faucet } from '../dev/index.js';
import { encodeMemo } from '../memo/index.js';
import type { SpendBudget } from './spend-budget.js';

/**
 * The demo agent: a client that pays this server's own paid routes over HTTP 402 with the real
 * client libraries (mppx for rail A, @x402/fetch for rails B and C), narrating every step. Its
 * requests go straight into the app's fetch handler, so it needs no listening server and runs in
 * tests (the one exception, rail C's Solana RPC, is in `loopbackSolanaRpc`).
 */

export type DemoRail = 'A' | 'B' | 'C';
export type DemoStepKind = 'info' | 'request' | 'payment' | 'result' | 'error';

/** One `event: step` of the stream (without its number, which the stream assigns). */
export interface DemoEvent {
  kind: DemoStepKind;
  message: string;
  route?: string;
  rail?: DemoRail;
  status?: number;
  amount_usd?: string;
  reference?: string;
  data?: unknown;
}

export interface LiveWallet {
  privateKey: Hex;
  /** Base units: the most demos may ever spend from this wallet, on all instances together. */
  spendCapUsd: bigint;
}

export interface TourOptions {
  mode: 'local' | 'live';
  faucet: Faucet | null;
  chains: Chains;
  liveWallet: LiveWallet | null;
  /** Live mode: the wallet's budget, shared by every run on every instance. */
  budget: SpendBudget;
  /** The app's own fetch handler. */
  appFetch: (request: Request) => Response | Promise<Response>;
  /** Origin for the requests' URLs (routing ignores it). */
  origin: string;
  /** Aborts when the client leaves or the run's time is up: nothing new starts after it. */
  signal: AbortSignal;
  stepTimeoutMs: number;
  emit(event: DemoEvent): void;
  log: Logger;
}

export interface TourResult {
  /** Base units charged (calls that came back with a receipt). */
  spent: bigint;
  /** Paid calls that were charged. */
  calls: number;
}

/** Local mode funds each network with this much (base units). */
const FUNDING = 1_000_000n;
const YIELD_RATES = { method: 'GET', path: '/api/mpp/treasury/yield-rates' } as const;
const MEMO_DECODE = { method: 'POST', path: '/api/mpp/memo/decode' } as const;
const COMPLIANCE_CHECK = { method: 'POST', path: '/api/mpp/compliance/check' } as const;

/** Thrown before signing a payment the live spend cap does not allow: the tour ends there. */
class SpendCapReached extends Error {}

interface Payer {
  evm: PrivateKeyAccount;
  /** Local mode only: rail C. */
  solana: KeyPairSigner | null;
}

interface PaidCall {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  rail: DemoRail;
  /** Narration: why the agent calls it. */
  purpose: string;
}

/** One step's signal (run over, or the step's own time up) and its narration, silent once the signal fired. */
interface Step {
  signal: AbortSignal;
  emit(event: DemoEvent): void;
}

/** How a step ended: `stop` ends the tour (client gone, time up, spend cap). */
type Outcome<T> = { state: 'ok'; value: T } | { state: 'failed' | 'stop' };

export async function runTour(options: TourOptions): Promise<TourResult> {
  return new Tour(options).run();
}

class Tour {
  /** The charged calls, in order. */
  private readonly paid: { rail: DemoRail; route: string; amount: bigint }[] = [];

  constructor(private readonly o: TourOptions) {}

  async run(): Promise<TourResult> {
    const { mode } = this.o;
    this.o.emit({
      kind: 'info',
      message:
        mode === 'local'
          ? 'Demo agent starting: it will pay three of this server\'s paid routes over HTTP 402, on rails A (MPP on Tempo), B (x402 on Base) and C (x402 on Solana).'
          : 'Demo agent starting in live mode: it pays from the configured wallet on rail A (MPP on Tempo) only, within the spend cap.',
      data: { scenario: 'tour', mode },
    });
    const payer = await this.attempt((step) => this.preparePayer(step));
    if (payer.state !== 'ok') return this.result();
    if ((await this.attempt((step) => this.probe(step))).state === 'stop') return this.result();
    for (const call of this.paidCalls(payer.value)) {
      if ((await this.attempt((step) => this.pay(call, payer.value, step))).state === 'stop') return this.result();
    }
    this.summarise();
    return this.result();
  }

  private result(): TourResult {
    return { spent: this.paid.reduce((sum, p) => sum + p.amount, 0n), calls: this.paid.length };
  }

  /** Runs one step within the step's time; says whether the tour goes on. */
  private async attempt<T>(work: (step: Step) => Promise<T>): Promise<Outcome<T>> {
    if (this.o.signal.aborted) return { state: 'stop' };
    const signal = AbortSignal.any([this.o.signal, AbortSignal.timeout(this.o.stepTimeoutMs)]);
    const step: Step = {
      signal,
      emit: (event) => {
        if (!signal.aborted) this.o.emit(event);
      },
    };
    try {
      const value = await new Promise<T>((resolve, reject) => {
        // A step that hangs is left behind: its fetch sends nothing more and it narrates nothing more.
        const onAbort = () => reject(signal.reason as Error);
        signal.addEventListener('abort', onAbort, { once: true });
        work(step)
          .then(resolve, reject)
          .finally(() => signal.removeEventListener('abort', onAbort));
      });
      return { state: 'ok', value };
    } catch (error) {
      if (this.o.signal.aborted) return { state: 'stop' };
      if (error instanceof SpendCapReached) {
        this.o.emit({ kind: 'error', message: error.message });
        return { state: 'stop' };
      }
      this.o.log.warn({ err: error }, 'demo agent step failed');
      // Live errors can quote RPC URLs (and their keys): the details stay in the log there.
      const detail = this.o.mode === 'local' && error instanceof Error ? `: ${error.message}` : '.';
      const message = signal.aborted ? `The step took longer than ${this.o.stepTimeoutMs / 1000} s and was abandoned.` : `The step failed${detail}`;
      this.o.emit({ kind: 'error', message });
      return { state: 'failed' };
    }
  }

  /** A fetch into the app that refuses to send anything once the step is over: no payment leaves after the client does. */
  private fetchFor(signal: AbortSignal): typeof fetch {
    return async (input, init) => {
      const request = new Request(input, init);
      signal.throwIfAborted();
      return this.o.appFetch(request);
    };
  }

  private url(path: string): string {
    return `${this.o.origin}${path}`;
  }

  private async preparePayer(step: Step): Promise<Payer> {
    const { chains, faucet, liveWallet } = this.o;
    if (this.o.mode === 'live') {
      const evm = privateKeyToAccount(liveWallet!.privateKey);
      const cap = this.o.budget.cap!;
      const spent = await this.o.budget.spent();
      step.emit({
        kind: 'info',
        message: `Paying from the live wallet ${evm.address} on Tempo. Spend cap ${displayUsd(cap)}; ${displayUsd(spent)} spent by demos so far.`,
        data: { evm: evm.address, spend_cap_usd: formatUsd(cap), spent_usd: formatUsd(spent) },
      });
      return { evm, solana: null };
    }
    const payer = { evm: privateKeyToAccount(generatePrivateKey()), solana: await generateKeyPairSigner() };
    step.emit({
      kind: 'info',
      message: `Made a fresh payer wallet: ${payer.evm.address} on Tempo and Base, ${payer.solana.address} on Solana.`,
      data: { evm: payer.evm.address, solana: payer.solana.address },
    });
    const fundings = [
      [chains.tempo.network, payer.evm.address],
      [chains.base.network, payer.evm.address],
      [chains.solana.network, payer.solana.address],
    ] as const;
    for (const [network, address] of fundings) {
      step.signal.throwIfAborted();
      const { txHash } = await faucet!.fund(network, address, FUNDING);
      step.emit({
        kind: 'info',
        message: `The dev faucet credited ${formatUsd(FUNDING)} USD of test stablecoin to ${address} on ${network}.`,
        amount_usd: formatUsd(FUNDING),
        reference: txHash,
        data: { network, address },
      });
    }
    return payer;
  }

  /** An unpaid call: what a 402 looks like, its price and the rails it offers. */
  private async probe(step: Step): Promise<void> {
    const route = `${YIELD_RATES.method} ${YIELD_RATES.path}`;
    step.emit({ kind: 'request', route, message: `Calling ${route} without paying, to see what it asks for.` });
    const response = await this.fetchFor(step.signal)(this.url(YIELD_RATES.path));
    const body = (await response.json().catch(() => ({}))) as { price?: string; rails?: string[] };
    const offers: { rail: DemoRail; protocol: string; network: string; amount_usd: string }[] = [];
    for (const challenge of Challenge.fromResponseList(response)) {
      const request = challenge.request as { amount?: string; methodDetails?: { chainId?: number } };
      if (challenge.method !== 'tempo' || request.amount === undefined) continue;
      offers.push({ rail: 'A', protocol: `mpp ${challenge.method}.${challenge.intent}`, network: `eip155:${request.methodDetails?.chainId ?? ''}`, amount_usd: formatUsd(BigInt(request.amount)) });
    }
    const required = response.headers.get('PAYMENT-REQUIRED');
    for (const accept of required ? decodePaymentRequiredHeader(required).accepts : []) {
      const rail: DemoRail = accept.network.startsWith('solana:') ? 'C' : 'B';
      offers.push({ rail, protocol: `x402 ${accept.scheme}`, network: accept.network, amount_usd: formatUsd(BigInt(accept.amount)) });
    }
    step.emit({
      kind: 'request',
      route,
      status: response.status,
      ...(body.price ? { amount_usd: body.price } : {}),
      message:
        response.status === 402
          ? `${route} answered 402 Payment Required: ${body.price ?? '?'} USD per call, on rails ${(body.rails ?? []).join(', ')}. ` +
            'The offers are in WWW-Authenticate (MPP) and PAYMENT-REQUIRED (x402).'
          : `${route} answered ${response.status} instead of 402.`,
      data: { price: body.price, rails: body.rails, offers },
    });
  }

  private paidCalls(payer: Payer): PaidCall[] {
    const local = this.o.mode === 'local';
    const memo = encodeMemo({
      type: 'salary',
      employerId: 'demo-employer',
      employeeId: 'demo-employee',
      runId: 'demo-run',
      amount: 5_000_000_000n,
      payPeriodStart: new Date('2026-01-01T00:00:00Z'),
      payPeriodEnd: new Date('2026-01-31T00:00:00Z'),
      costCentre: 'ENG',
    });
    return [
      { ...YIELD_RATES, rail: 'A', purpose: 'to read the treasury yield rates' },
      { ...MEMO_DECODE, body: { memo }, rail: local ? 'B' : 'A', purpose: 'to decode a payroll memo' },
      { ...COMPLIANCE_CHECK, body: { walletAddress: payer.evm.address }, rail: local ? 'C' : 'A', purpose: `to screen the wallet ${payer.evm.address}` },
    ];
  }

  /** One paid call on one rail: the client library answers the 402 itself; we approve the amount it offers before it signs. */
  private async pay(call: PaidCall, payer: Payer, step: Step): Promise<void> {
    const route = `${call.method} ${call.path}`;
    const { rail } = call;
    let approved: bigint | null = null;
    // The libraries wrap what their hooks throw in errors of their own: keep ours to report.
    let refusal: Error | null = null;
    const approve = async (amount: bigint, offer: string) => {
      step.signal.throwIfAborted();
      if (!(await this.o.budget.reserve(amount))) {
        const spent = await this.o.budget.spent();
        throw (refusal = new SpendCapReached(
          `Stopping before ${route}: its ${formatUsd(amount)} USD would take demo spending to ${formatUsd(spent + amount)} USD, above the cap of ${formatUsd(this.o.budget.cap!)} USD.`,
        ));
      }
      approved = amount;
      step.emit({
        kind: 'payment',
        route,
        rail,
        status: 402,
        amount_usd: formatUsd(amount),
        message: `The server asked ${formatUsd(amount)} USD (${offer}); signing the payment on rail ${rail}.`,
      });
    };

    step.emit({ kind: 'request', route, rail, message: `Calling ${route} ${call.purpose}, ready to pay on rail ${rail}.` });
    const rpc = rail === 'C' ? await this.loopbackSolanaRpc() : null;
    let response: Response;
    try {
      const pay = this.payingFetch(rail, payer, approve, step.signal, rpc?.url);
      response = await pay(this.url(call.path), {
        method: call.method,
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body), headers: { 'content-type': 'application/json' } }),
      });
    } catch (error) {
      throw refusal ?? error;
    } finally {
      await rpc?.close();
    }

    const reference = receiptReference(response, rail);
    const amount = approved as bigint | null;
    const body: unknown = await response.json().catch(() => null);
    // An answer to an abandoned step is neither narrated nor counted; a live reservation stays (it may have been charged).
    step.signal.throwIfAborted();
    if (amount !== null && reference !== null) {
      this.paid.push({ rail, route, amount });
    } else if (amount !== null && response.status !== 502) {
      // Not charged (refused, or the handler failed): the reservation goes back. A 502 means
      // the outcome is unknown, so it stays spent.
      await this.o.budget.release(amount);
    }
    const ok = response.ok && reference !== null;
    step.emit({
      kind: ok ? 'result' : 'error',
      route,
      rail,
      status: response.status,
      ...(amount !== null && reference !== null ? { amount_usd: formatUsd(amount) } : {}),
      ...(reference !== null ? { reference } : {}),
      message: ok
        ? `${route} answered ${response.status} after payment on rail ${rail}; receipt reference ${reference}.`
        : `${route} answered ${response.status}${errorText(body)}.`,
      data: brief(body),
    });
  }

  private payingFetch(
    rail: DemoRail,
    payer: Payer,
    approve: (amount: bigint, offer: string) => Promise<void>,
    signal: AbortSignal,
    solanaRpcUrl: string | undefined,
  ): typeof fetch {
    const { chains } = this.o;
    const fetchIn = this.fetchFor(signal);
    if (rail === 'A') {
      // Local: the dev RPC answers Tempo's call-batch gas estimates a plain EVM cannot.
      const transport: Transport =
        this.o.mode === 'local' ? http(this.url('/api/dev/rpc/tempo'), { fetchFn: fetchIn }) : chains.tempo.connection.transport;
      const client = createClient({ chain: tempoChain, transport, account: payer.evm });
      const mppx = Mppx.create({
        methods: [tempo.charge({ account: payer.evm, getClient: () => client })],
        polyfill: false,
        fetch: fetchIn,
        // One payment per call: a refused credential is reported, not paid again.
        maxPaymentRetries: 1,
        onChallenge: async (challenge, { createCredential }) => {
          const request = challenge.request as { amount: string; currency?: string; recipient?: string };
          await approve(BigInt(request.amount), `MPP ${challenge.method}.${challenge.intent} to ${request.recipient}`);
          return createCredential();
        },
      });
      return mppx.fetch as typeof fetch;
    }
    // x402 clients pay only the assets they are told to: local tokens live at their own addresses.
    const [network, asset] = rail === 'B' ? [chains.base.network, chains.base.token] : [chains.solana.network, chains.solana.mint];
    const client = new x402Client().setSpendControls({
      allowedAssets: [{ network: network as Network, asset, maxAmountPerPayment: FUNDING.toString() }],
    });
    if (rail === 'B') client.register(network as Network, new ExactEvmScheme(payer.evm));
    else client.register(network as Network, new ExactSvmScheme(payer.solana!, { rpcUrl: solanaRpcUrl! }));
    client.onBeforePaymentCreation(async ({ selectedRequirements: offer }) => {
      await approve(BigInt(offer.amount), `x402 ${offer.scheme} on ${offer.network} to ${offer.payTo}`);
    });
    return wrapFetchWithPayment(fetchIn, client);
  }

  /**
   * @x402/svm's client takes only an RPC URL and calls the global fetch, so it cannot use the
   * app's fetch: for rail C, a loopback-only listener passes JSON-RPC on to the app's dev RPC.
   */
  private loopbackSolanaRpc(): Promise<{ url: string; close(): Promise<void> }> {
    const target = this.url('/api/dev/rpc/solana');
    const forward = async (request: Request) =>
      request.method === 'POST'
        ? this.o.appFetch(new Request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: await request.text() }))
        : new Response(null, { status: 405 });
    return new Promise((resolve) => {
      const server = serve({ fetch: forward, port: 0, hostname: '127.0.0.1' }, () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // The client's keep-alive sockets would hold close() open.
              if ('closeAllConnections' in server) server.closeAllConnections();
            }),
        }),
      );
    });
  }

  private summarise(): void {
    const { spent, calls } = this.result();
    const parts = this.paid.map((p) => `${formatUsd(p.amount)} USD on rail ${p.rail} for ${p.route}`);
    this.o.emit({
      kind: 'info',
      message: `Done: ${calls} paid call${calls === 1 ? '' : 's'}, ${formatUsd(spent)} USD in total${parts.length > 0 ? ` (${parts.join('; ')})` : ''}.`,
      amount_usd: formatUsd(spent),
      data: { calls, spent_usd: formatUsd(spent), by_rail: this.paid.map((p) => ({ rail: p.rail, route: p.route, amount_usd: formatUsd(p.amount) })) },
    });
  }
}

/** Where the payment settled: the Payment-Receipt reference (rail A) or the x402 settlement transaction (B, C). */
function receiptReference(response: Response, rail: DemoRail): string | null {
  try {
    if (rail === 'A') {
      const receipt = response.headers.get('Payment-Receipt');
      return receipt ? Receipt.deserialize(receipt).reference : null;
    }
    const settlement = response.headers.get('PAYMENT-RESPONSE') ?? response.headers.get('X-PAYMENT-RESPONSE');
    return settlement ? decodePaymentResponseHeader(settlement).transaction || null : null;
  } catch {
    return null;
  }
}

function errorText(body: unknown): string {
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? `: ${error}` : '';
}

/** A response cut down for narration: scalars, short arrays, and one level of nesting. */
function brief(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'string' && value.length > 120 ? `${value.slice(0, 117)}...` : value;
  if (Array.isArray(value)) return value.length <= 6 && depth < 2 ? value.map((v) => brief(v, depth + 1)) : `[${value.length} items]`;
  if (depth >= 2) return '{...}';
  return Object.fromEntries(Object.entries(value).slice(0, 12).map(([k, v]) => [k, brief(v, depth + 1)]));
}
