/**
 * An MPP session on Tempo with mppx's session manager: one channel deposit, then a voucher per
 * tick of a per-tick route (the demo employee's live salary balance, billed $0.001 a tick), then a
 * cooperative close that settles exactly what was served.
 *
 *   BASE_URL=http://localhost:3000 npx tsx mppx-session.ts
 *
 * Local mode: a fresh payer funded by the dev faucet, the embedded Tempo chain through
 * /api/dev/rpc/tempo, and an identity token for the seeded demo employee from /api/dev/token
 * (live: a token from your identity provider). Exits 0 only on a 200 stream, the ticks read, and a
 * closing receipt. Runs in CI (run-all.sh).
 */
import { Session } from 'mppx/tempo';
import { createClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const print = (line: string) => process.stdout.write(`${line}\n`);
const TICKS = 3;

async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

// 1. Who is asking: the stream is the employee's own (or their employer's owner or agent key).
const { token } = await postJson<{ token: string }>('/api/dev/token', { sub: 'demo-employee', email: 'ada@demo-payroll.example' });
const me = (await (await fetch(`${BASE_URL}/api/session`, { headers: { authorization: `Bearer ${token}` } })).json()) as { employee_ids: string[] };
const employeeId = me.employee_ids[0]!;

// 2. Who pays: a payer key with $5 (live: your own funded key).
const account = privateKeyToAccount(generatePrivateKey());
await postJson('/api/dev/faucet', { network: 'eip155:4217', address: account.address, amount: '5' });

// 3. The session manager opens a channel with at most $0.05 deposited, signing against the local RPC.
//    Its `fetch` is the one it pays through; wrapping it shows the paid request's status.
let streamStatus = 0;
const client = createClient({ chain: tempoChain, transport: http(`${BASE_URL}/api/dev/rpc/tempo`), account });
const manager = Session.Client.sessionManager({
  account,
  client,
  maxDeposit: '0.05',
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    if ((init?.method ?? 'GET') === 'GET' && response.status !== 402) streamStatus = response.status;
    return response;
  },
});

// 4. Read three ticks (one a second), then leave: the manager posts a voucher whenever the server
//    asks, and leaving the loop cancels the stream (an AbortSignal would also abort a voucher in flight).
const ticks: unknown[] = [];
const stream = await manager.sse(`${BASE_URL}/api/mpp/employee/balance/stream?employeeId=${employeeId}`, {
  headers: { 'X-Identity-Token': token },
});
print(`GET /api/mpp/employee/balance/stream: ${streamStatus}`);
for await (const data of stream) {
  ticks.push(JSON.parse(data));
  print(`tick ${data}`);
  if (ticks.length === TICKS) break;
}

// 5. Close: the service settles the ticks served and answers with the session's receipt.
const receipt = await manager.close();
print(`Payment-Receipt (close): ${JSON.stringify(receipt)}`);
if (streamStatus !== 200 || ticks.length !== TICKS || !receipt) process.exit(1);
