/**
 * Pays one paid route of a local server with the real client libraries, on the rail you choose.
 * `npm run pay -- --help` (USAGE below) lists the options and examples; test/pay-cli.test.ts runs
 * every example against a fresh server.
 */
import { parseArgs } from 'node:util';
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { Mppx, stripe, tempo } from 'mppx/client';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { DEFAULT_BASE_URL, serverUrl } from './server-url.js';

const USAGE = `usage: npm run pay -- <A|B|C|card> <METHOD> <path> [json body] [options]

Pays one paid route (/api/mpp/*, /api/x402/*) with the real client libraries. Each run makes a
fresh payer and funds it with $5 from the server's dev faucet, so it works in local mode only.

Rails: A = MPP on Tempo (mppx), B = x402 on Base, C = x402 on Solana (@x402/fetch),
       card = the card offer (mppx's stripe method, the local card sandbox): payroll execute, and
              the off-ramp, where the card buys a $0.50 card credit that later calls draw on

Options:
  --base-url URL          the server (default: $BASE_URL, else ${DEFAULT_BASE_URL}); printed first
  --identity-token JWT    sent as X-Identity-Token: routes on an employer's data need the caller
  --agent-key KEY         sent as X-Agent-Key (the employer's agent key) instead of a token
  --credit ID             card only: draw the fee from this card credit (Payment-Credit) instead
                          of charging the card; the holder's identity option must come with it
  -h, --help              this text

Examples (README "Try it" makes TOKEN, the demo owner's token; EMPLOYER, EMPLOYEE: ids of its
employer and an employee; RUN: a draft payroll run from POST /api/employers/$EMPLOYER/payroll;
AGENT_KEY: from POST /api/employers/$EMPLOYER/agent-key; README "Cash out by card" makes ADA,
ADA_TOKEN and BANK: the demo employee, her token and her bank account's bank_account_id):
  npm run pay -- A GET /api/mpp/treasury/yield-rates
  npm run pay -- B GET /api/mpp/treasury/yield-rates
  npm run pay -- C POST /api/mpp/memo/decode '{"memo":"0x${'00'.repeat(32)}"}'
  npm run pay -- A GET /api/mpp/employee/$EMPLOYEE/history --agent-key "$AGENT_KEY"
  npm run pay -- card POST /api/mpp/payroll/execute "{\\"payrollRunId\\":\\"$RUN\\"}" --identity-token "$TOKEN"
  npm run pay -- card POST /api/mpp/bridge/offramp "{\\"employeeId\\":\\"$ADA\\",\\"amount\\":\\"1\\",\\"destinationType\\":\\"ach\\",\\"bankAccountId\\":\\"$BANK\\"}" --identity-token "$ADA_TOKEN"
`;

const RAILS = ['A', 'B', 'C', 'card'] as const;
type PayRail = (typeof RAILS)[number];

interface Options {
  rail: PayRail;
  method: string;
  path: string;
  body: string | undefined;
  baseUrl: string;
  baseUrlFrom: string;
  identity: Record<string, string>;
  /** A card credit to draw on instead of paying. */
  credit: string | undefined;
}

/** A failure the user can act on: printed as one line, never as a stack trace. */
class PayError extends Error {}

/** The command line, or null after --help. Throws PayError (exit 2) on a wrong one. */
function readOptions(argv: string[]): Options | null {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      'identity-token': { type: 'string' },
      'agent-key': { type: 'string' },
      credit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  const [rail, method, path, body, ...extra] = positionals;
  if (!RAILS.includes(rail as PayRail)) throw new PayError(`the rail must be one of ${RAILS.join(', ')}, not ${rail ?? 'nothing'}`);
  if (!method || !/^[A-Za-z]+$/.test(method)) throw new PayError('give the HTTP method after the rail (GET, POST, ...)');
  if (!path?.startsWith('/')) throw new PayError('give the route path after the method, starting with /');
  if (extra.length > 0) throw new PayError(`unexpected arguments after the body: ${extra.join(' ')}`);
  // The server refuses both at once (400): say so before anything is paid.
  if (values['identity-token'] && values['agent-key']) throw new PayError('give --identity-token or --agent-key, not both');
  if (values.credit && rail !== 'card') throw new PayError('--credit draws on a card credit: use it with the card rail');
  const identity: Record<string, string> = {};
  if (values['identity-token']) identity['X-Identity-Token'] = values['identity-token'];
  if (values['agent-key']) identity['X-Agent-Key'] = values['agent-key'];
  const server = serverUrl(values['base-url']);
  if ('problem' in server) throw new PayError(server.problem);
  return { rail: rail as PayRail, method: method.toUpperCase(), path, body, baseUrl: server.baseUrl, baseUrlFrom: server.from, identity, credit: values.credit };
}

/** The request to pay for: same method, body and identity headers on every attempt. */
function requestInit(options: Options): RequestInit {
  const headers: Record<string, string> = { ...options.identity };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return { method: options.method, headers, ...(options.body === undefined ? {} : { body: options.body }) };
}

const excerpt = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text).replace(/\s+/g, ' ');

async function post<T>(baseUrl: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new PayError(`${path} answered ${response.status}: ${excerpt(await response.text())}${response.status === 404 ? ' (dev routes exist in local mode only)' : ''}`);
  return (await response.json()) as T;
}

/** The rails a 402 offers: its body's `rails`, and `card` when a Payment challenge uses the stripe method. */
function offeredRails(challenge: Response, body: { rails?: string[] }): PayRail[] {
  const rails = (body.rails ?? []).filter((r): r is PayRail => RAILS.includes(r as PayRail));
  if (/method="stripe"/.test(challenge.headers.get('www-authenticate') ?? '')) rails.push('card');
  return rails;
}

/**
 * Asks once without paying. A 402 is checked against the rail asked for (one clear line instead
 * of a client library's stack trace); any other answer is returned, as nothing needs paying.
 */
async function checkOffer(options: Options): Promise<Response | null> {
  const response = await fetch(`${options.baseUrl}${options.path}`, requestInit(options));
  if (response.status !== 402) return response;
  const body = (await response.json().catch(() => ({}))) as { rails?: string[]; unit?: string; price?: string };
  if (body.unit && body.unit !== 'charge') {
    throw new PayError(`${options.method} ${options.path} is paid per ${body.unit}: pay it through an MPP session (mppx's Session.Client.sessionManager), not this tool`);
  }
  const offered = offeredRails(response, body);
  if (!offered.includes(options.rail)) {
    throw new PayError(`${options.method} ${options.path} offers ${offered.length === 1 ? 'rail' : 'rails'} ${offered.join(', ') || 'none'}, not ${options.rail}`);
  }
  return null;
}

interface DevChains {
  networks: { network: string; chain_id: number | null; contracts: Record<string, string> }[];
}

/** A fetch that pays on the chosen rail, with a freshly funded payer. */
async function payingFetch(rail: PayRail, baseUrl: string): Promise<typeof fetch> {
  const fund = (network: string, address: string) => post(baseUrl, '/api/dev/faucet', { network, address, amount: '5' });
  if (rail === 'A') {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund('eip155:4217', account.address);
    const client = createClient({ chain: tempoChain, transport: http(`${baseUrl}/api/dev/rpc/tempo`), account });
    return Mppx.create({ methods: [tempo.charge({ account, getClient: () => client })], polyfill: false }).fetch as typeof fetch;
  }
  if (rail === 'card') {
    const method = stripe.charge({
      paymentMethod: 'pm_card_visa',
      // Stripe issues shared payment tokens from a server; locally the dev route does.
      createToken: async ({ amount, currency, expiresAt, paymentMethod }) =>
        (await post<{ spt: string }>(baseUrl, '/api/dev/card/token', { payment_method: paymentMethod, amount, currency, expires_at: expiresAt })).spt,
    });
    return Mppx.create({ methods: [method], polyfill: false }).fetch as typeof fetch;
  }

  // x402 clients pay only assets they are told to: local tokens live at their own addresses.
  const chainsResponse = await fetch(`${baseUrl}/api/dev/chains`);
  if (!chainsResponse.ok) throw new PayError(`/api/dev/chains answered ${chainsResponse.status} (dev routes exist in local mode only)`);
  const { networks } = (await chainsResponse.json()) as DevChains;
  const base = networks.find((n) => n.network === 'eip155:8453')!;
  const solana = networks.find((n) => n.network.startsWith('solana:'))!;
  const client = new x402Client().setSpendControls({
    allowedAssets: [
      { network: 'eip155:8453', asset: base.contracts.stablecoin!, maxAmountPerPayment: '5000000' },
      { network: solana.network as Network, asset: solana.contracts.mint!, maxAmountPerPayment: '5000000' },
    ],
  });
  if (rail === 'B') {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund('eip155:8453', account.address);
    client.register('eip155:8453', new ExactEvmScheme(account));
  } else {
    const signer = await generateKeyPairSigner();
    await fund(solana.network, signer.address);
    client.register(solana.network as Network, new ExactSvmScheme(signer, { rpcUrl: `${baseUrl}/api/dev/rpc/solana` }));
  }
  return wrapFetchWithPayment(fetch, client);
}

/** A fetch that pays from a card credit: its id in Payment-Credit, nothing charged. */
function drawingOn(credit: string): typeof fetch {
  return (input, init = {}) => fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), 'Payment-Credit': credit } });
}

const out = (line: string) => process.stdout.write(`${line}\n`);

/** The answer: status, the receipt headers decoded, the body. Exit 1 when it is an error. */
async function printAnswer(options: Options, response: Response, paid: boolean): Promise<void> {
  out(`${options.method} ${options.path} ${paid ? `on rail ${options.rail}` : 'without payment'}: ${response.status}`);
  const receipt = response.headers.get('payment-receipt');
  if (receipt) out(`Payment-Receipt: ${Buffer.from(receipt, 'base64url').toString('utf8')}`);
  for (const header of ['PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE']) {
    const value = response.headers.get(header);
    if (value) out(`${header}: ${JSON.stringify(decodePaymentResponseHeader(value))}`);
  }
  const credit = response.headers.get('payment-credit');
  if (credit) out(`Card credit ${credit}: ${response.headers.get('payment-credit-remaining')} USD left (the next call draws on it with --credit ${credit})`);
  out(await response.text());
  if (response.status >= 400) process.exitCode = 1;
  // Routes on an employer's data answer a payer they cannot place like a missing record.
  if (paid && response.status === 404 && Object.keys(options.identity).length === 0) {
    process.stderr.write('pay: 404 after payment: if the route acts on an employer\'s data, say who pays with --identity-token or --agent-key\n');
  }
}

/** One line for any failure: ours as written, a refused connection by its code, the rest by message. */
function describe(error: unknown, baseUrl: string): string {
  if (error instanceof PayError) return error.message;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (error instanceof TypeError && error.message === 'fetch failed') return `cannot reach ${baseUrl}: ${cause?.code ?? cause?.message ?? 'no answer'}`;
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

async function main(): Promise<void> {
  let options: Options | null;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (error) {
    // parseArgs explains at length how to pass a value starting with '-': its first sentence is enough.
    const message = error instanceof Error ? error.message.split('. ')[0]! : String(error);
    process.stderr.write(`pay: ${message} (npm run pay -- --help)\n`);
    process.exitCode = 2;
    return;
  }
  if (!options) return void process.stdout.write(USAGE);
  out(`Server: ${options.baseUrl} (${options.baseUrlFrom})`);
  try {
    const unpaid = await checkOffer(options);
    if (unpaid) return await printAnswer(options, unpaid, false);
    const pay = options.credit ? drawingOn(options.credit) : await payingFetch(options.rail, options.baseUrl);
    await printAnswer(options, await pay(`${options.baseUrl}${options.path}`, requestInit(options)), true);
  } catch (error) {
    process.stderr.write(`pay: ${describe(error, options.baseUrl)}\n`);
    process.exitCode = 1;
  }
}

await main();
