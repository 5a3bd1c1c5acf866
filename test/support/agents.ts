import { createHmac, sign, type KeyObject } from 'node:crypto';
import { createWalletClient, parseEventLogs } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { agentIdentityRegistryAbi } from '../../src/chains/evm/abis.js';
import { canonicalMessage } from '../../src/features/agents/identity-proof.js';
import { AgentPayService } from '../../src/features/agents/pay.js';
import { AgentRequestVerifier } from '../../src/features/agents/request-proof.js';
import { SecretBox } from '../../src/features/agents/secret-box.js';
import { AgentsService } from '../../src/features/agents/service.js';
import { posterReservations } from '../../src/features/escrow/store.js';
import { enqueueReputationWrite } from '../../src/features/reputation/service.js';
import { createLogger } from '../../src/log.js';
import type { TestApp } from './app.js';

/** How a test agent signs: its HMAC secret, its EVM key (ERC-8004 owner) or its Ed25519 key. */
export type AgentSigner = { hmac: string } | { evm: PrivateKeyAccount } | { ed25519: KeyObject };

/** Every (request, timestamp) already signed: an identical request is never signed twice at one timestamp. */
const signed = new Set<string>();

/**
 * The three identity headers for one request. Identical requests get different timestamps (now,
 * else a second earlier, within the window), so they carry different signatures, as a real agent's would.
 */
export async function agentProofHeaders(
  identifier: string,
  signer: AgentSigner,
  request: { method: string; path: string; body: string; timestamp?: number },
): Promise<Record<string, string>> {
  let timestamp = request.timestamp ?? Math.floor(Date.now() / 1000);
  const requestKey = JSON.stringify([identifier, request.method, request.path, request.body]);
  if (request.timestamp === undefined) while (signed.has(`${timestamp}:${requestKey}`)) timestamp--;
  signed.add(`${timestamp}:${requestKey}`);
  const message = canonicalMessage({ identifier, method: request.method, pathWithQuery: request.path, timestamp, body: new TextEncoder().encode(request.body) });
  let signature: string;
  if ('hmac' in signer) signature = `0x${createHmac('sha256', signer.hmac).update(message).digest('hex')}`;
  else if ('evm' in signer) signature = await signer.evm.signMessage({ message });
  else signature = `0x${sign(null, Buffer.from(message), signer.ed25519).toString('hex')}`;
  return { 'X-Agent-Identifier': identifier, 'X-Agent-Timestamp': String(timestamp), 'X-Agent-Signature': signature };
}

/**
 * A new ERC-8004 agent on the embedded Tempo chain, owned by `owner` (default: a fresh key), not
 * by the service wallet: the service may then rate it.
 */
export async function erc8004Agent(
  t: TestApp,
  { owner = privateKeyToAccount(generatePrivateKey()), uri = 'https://agent.example/card.json' }: { owner?: PrivateKeyAccount; uri?: string } = {},
): Promise<{ owner: PrivateKeyAccount; agentId: bigint }> {
  const funded = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: owner.address, amount: '1' } });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}`);
  const tempo = t.chains!.tempo;
  const wallet = createWalletClient({ account: owner, chain: tempo.connection.chain, transport: tempo.connection.transport });
  const hash = await wallet.writeContract({ address: tempo.contracts.agentIdentityRegistry, abi: agentIdentityRegistryAbi, functionName: 'register', args: [uri] });
  const receipt = await tempo.connection.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  const [registered] = parseEventLogs({ abi: agentIdentityRegistryAbi, eventName: 'Registered', logs: receipt.logs });
  return { owner, agentId: registered!.args.agentId };
}

/** The agent/pay service behind the route, for what HTTP cannot reach (the reconcile job's work, a crash's leftovers). */
export function agentPayService(t: TestApp): AgentPayService {
  const agents = new AgentsService({ database: t.database, employers: t.services.employers, secrets: new SecretBox({ configured: undefined, dataDir: t.dataDir }) });
  const reputation = { tierOf: () => Promise.resolve({ tier: 'unknown' as const }), enqueue: enqueueReputationWrite };
  return new AgentPayService({
    database: t.database,
    verifier: new AgentRequestVerifier({ database: t.database, agents, tempo: t.chains!.tempo }),
    employers: t.services.employers,
    tempo: t.chains!.tempo,
    reputation,
    escrowReservations: posterReservations,
    log: createLogger('silent'),
  });
}
