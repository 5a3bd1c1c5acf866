/**
 * The card: mppx's stock `stripe` method paying the $0.25 off-ramp, whose card offer is a $0.50
 * card credit (the card processor's minimum): the first call buys it and draws $0.25, the next one
 * draws the rest with `Payment-Credit`, and a new credit's remainder goes back to the card.
 *
 *   BASE_URL=http://localhost:3000 npx tsx mppx-card-credit.ts
 *
 * Local mode: the card sandbox issues the shared payment tokens Stripe would (POST /api/dev/card/token),
 * and the demo employee Ada cashes out (her identity check is started by the demo owner and
 * approved by the bridge sandbox a few seconds later). Exits 0 only when every step answers as
 * described. Runs in CI (run-all.sh).
 */
import { Receipt } from 'mppx';
import { Mppx, stripe } from 'mppx/client';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);

async function call<T>(method: string, path: string, token: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) };
  const response = await fetch(`${BASE_URL}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
const devToken = async (sub: string) => (await call<{ token: string }>('POST', '/api/dev/token', null, { sub })).token;

// 1. Ada, her approved identity check and a bank account (what the portal does for her).
const owner = await devToken('demo-owner');
const employer = await call<{ id: string }>('POST', '/api/employers', owner, { name: 'Demo' });
const { employees } = await call<{ employees: { id: string; email: string }[] }>('GET', `/api/employers/${employer.id}/team`, owner);
const ada = employees.find((e) => e.email === 'ada@demo-payroll.example')!.id;
for (let tries = 0; (await call<{ kyc_status: string }>('POST', `/api/employees/${ada}/kyc`, owner)).kyc_status !== 'approved'; tries += 1) {
  if (tries === 60) throw new Error('the identity check was not approved within a minute');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}
const adaToken = await devToken('demo-employee');
const bank = await call<{ bank_account_id: string }>('POST', `/api/employees/${ada}/bank-accounts`, adaToken, {
  destinationType: 'ach',
  accountOwnerName: 'Ada Lovelace',
  details: { routingNumber: '021000021', accountNumber: '000123456789' },
});

// 2. The card, as mppx pays it: Stripe would issue the shared payment token; locally the dev route does.
const card = stripe.charge({
  paymentMethod: 'pm_card_visa',
  createToken: async ({ amount, currency, expiresAt, paymentMethod }) =>
    (await call<{ spt: string }>('POST', '/api/dev/card/token', null, { payment_method: paymentMethod, amount, currency, expires_at: expiresAt })).spt,
});
const mppx = Mppx.create({ methods: [card], polyfill: false });

// 3. The off-ramp, with Ada's identity: the credit is hers, and only she can draw on it.
const offramp = (headers: Record<string, string> = {}) =>
  mppx.fetch(`${BASE_URL}/api/mpp/bridge/offramp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Identity-Token': adaToken, ...headers },
    body: JSON.stringify({ employeeId: ada, amount: '1', destinationType: 'ach', bankAccountId: bank.bank_account_id }),
  });
const expect = (what: string, ok: boolean) => {
  if (!ok) throw new Error(`expected ${what}`);
};

const bought = await offramp();
const creditId = bought.headers.get('payment-credit');
print(`off-ramp paid by card: ${bought.status}; card credit ${creditId}, ${bought.headers.get('payment-credit-remaining')} USD left`);
const receipt = bought.headers.get('payment-receipt');
if (receipt) print(`Payment-Receipt: ${JSON.stringify(Receipt.deserialize(receipt))}`);
expect('a 200 with a receipt and a card credit', bought.status === 200 && receipt !== null && creditId !== null);

// 4. The next off-ramp draws the rest: no new card charge.
const drawn = await offramp({ 'Payment-Credit': creditId! });
print(`off-ramp paid from the credit: ${drawn.status}; ${drawn.headers.get('payment-credit-remaining')} USD left`);
expect('a 200 that leaves nothing', drawn.status === 200 && drawn.headers.get('payment-credit-remaining') === '0.000000');

// 5. A new credit's remainder goes back to the card.
const again = await offramp();
const refund = await fetch(`${BASE_URL}/api/card-credits/${again.headers.get('payment-credit')}/refund`, { method: 'POST', headers: { 'X-Identity-Token': adaToken } });
const refunded = (await refund.json()) as { status: string; refunded_usd: string };
print(`refund of the remainder: ${refund.status} ${JSON.stringify(refunded)}`);
expect('the remainder refunded', refund.status === 200 && refunded.status === 'refunded' && refunded.refunded_usd === '0.250000');
