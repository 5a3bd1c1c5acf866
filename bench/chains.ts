/**
 * Embedded chain figures (issue 3): the three chains to ready (first start deploys; a restart
 * replays the journals), token transfer + receipt latency on a journaled chain against the same
 * transfers on a chain without a journal in the same run, and Solana's replay cost.
 */
import { createPublicClient, createWalletClient, defineChain, keccak256, parseAbi, toHex, type Address } from 'viem';
import { loadedSecp256k1, signerRecovery } from '../src/chains/evm/secp256k1.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadArtifacts } from '../src/chains/contracts/compile.js';
import { openEmbeddedChains, type EmbeddedChains } from '../src/chains/embedded/index.js';
import { embeddedChainPorts } from '../src/chains/index.js';
import { Faucet } from '../src/features/dev/faucet.js';
import { startEmbeddedEvm, type EmbeddedEvm } from '../src/chains/embedded/evm.js';
import { EmbeddedSolana } from '../src/chains/embedded/solana.js';
import { generateKeyPairSigner } from '@solana/kit';
import { openDatabase } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { checkTarget } from './targets.js';

const TRANSFERS = 200;
const ERC20 = parseAbi(['function mint(address,uint256)', 'function transfer(address,uint256) returns (bool)']);
const chain = defineChain({
  id: 4217,
  name: 'bench',
  nativeCurrency: { name: 'E', symbol: 'E', decimals: 18 },
  rpcUrls: { default: { http: ['http://bench.invalid'] } },
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]!;

/** Mints to the operator, then times TRANSFERS sequential transfers, each until its receipt. */
async function transferLatencies(evm: EmbeddedEvm, operator: PrivateKeyAccount, token: Address): Promise<number[]> {
  const wallet = createWalletClient({ chain, account: operator, transport: evm.transport });
  const client = createPublicClient({ chain, transport: evm.transport });
  const mined = async (hash: `0x${string}`) => client.waitForTransactionReceipt({ hash, pollingInterval: 1 });
  await mined(await wallet.writeContract({ address: token, abi: ERC20, functionName: 'mint', args: [operator.address, 10n ** 15n] }));
  const latencies: number[] = [];
  for (let i = 0; i < TRANSFERS; i++) {
    const started = performance.now();
    await mined(await wallet.writeContract({ address: token, abi: ERC20, functionName: 'transfer', args: ['0x7000000000000000000000000000000000000007', 1n] }));
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** The reference: the same token on an embedded chain with no journal behind it. */
async function unjournaledLatencies(): Promise<number[]> {
  const artifact = (await loadArtifacts()).Stablecoin!;
  const operator = privateKeyToAccount(generatePrivateKey());
  const evm = await startEmbeddedEvm({ chainId: chain.id, funded: [{ address: operator.address, balance: 10n ** 24n }] });
  const wallet = createWalletClient({ chain, account: operator, transport: evm.transport });
  const client = createPublicClient({ chain, transport: evm.transport });
  const deployed = await client.waitForTransactionReceipt({
    hash: await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: ['B', 'B', '2', '0x0000000000000000000000000000000000000000'] }),
    pollingInterval: 1,
  });
  const token = deployed.contractAddress!;
  await client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ address: token, abi: parseAbi(['function setMinter(address,bool)']), functionName: 'setMinter', args: [operator.address, true] }),
    pollingInterval: 1,
  });
  return transferLatencies(evm, operator, token);
}

export async function chainFigures(runs: number): Promise<[string, string, string, string][]> {
  const firstStarts: number[] = [];
  const restarts: number[] = [];
  let journaled: number[] = [];
  let ports = { tempo: [] as number[], solana: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const database = await openDatabase({ dataDir: null });
    await migrate(database);
    let started = performance.now();
    await openEmbeddedChains(database);
    firstStarts.push(performance.now() - started);
    started = performance.now();
    const chains = await openEmbeddedChains(database);
    restarts.push(performance.now() - started);
    if (i === 0) {
      journaled = await transferLatencies(chains.tempo.evm, chains.tempo.operator, chains.tempo.contracts.stablecoin!);
      ports = await portLatencies(chains);
    }
    await database.close();
  }
  const plain = await unjournaledLatencies();
  const solanaReplay = await solanaReplayMs(500);
  checkTarget('embedded chains ready, first start', median(firstStarts), { below: 3000 }, 'ms');
  checkTarget('embedded chains ready, restart (journal replay)', median(restarts), { below: 3000 }, 'ms');
  checkTarget('token transfer + receipt, journaled, p50', median(journaled), { below: 20 }, 'ms');
  return [
    ['embedded Tempo, Base and Solana ready, first start (deploys contracts, creates the mint), ms', median(firstStarts).toFixed(0), 'target < 3000', (median(firstStarts) / 3000).toFixed(2)],
    ['embedded Tempo, Base and Solana ready, restart (journal replay), ms', median(restarts).toFixed(0), 'target < 3000', (median(restarts) / 3000).toFixed(2)],
    [
      `token transfer + receipt, journaled on PGlite, p50 / p99 ms (${TRANSFERS} sequential)`,
      `${median(journaled).toFixed(2)} / ${p99(journaled).toFixed(2)}`,
      `no journal: ${median(plain).toFixed(2)} / ${p99(plain).toFixed(2)}; target p50 < 20`,
      (median(journaled) / median(plain)).toFixed(2),
    ],
    [
      `Tempo port transferWithMemo (what features call: serialised, signed, journaled, receipt), p50 / p99 ms`,
      `${median(ports.tempo).toFixed(2)} / ${p99(ports.tempo).toFixed(2)}`,
      `raw journaled transfer p50 ${median(journaled).toFixed(2)}`,
      (median(ports.tempo) / median(journaled)).toFixed(2),
    ],
    [
      `Solana port SPL transfer with memo (kit RPC in process, journaled, confirmed), p50 / p99 ms`,
      `${median(ports.solana).toFixed(2)} / ${p99(ports.solana).toFixed(2)}`,
      '',
      '',
    ],
    [
      'embedded Solana reopen after 500 journaled transactions (replay), ms',
      solanaReplay.toFixed(0),
      `${(solanaReplay / 502).toFixed(2)} ms per journal entry`,
      '',
    ],
    await signatureRecoveryFigure(),
  ];
}

/**
 * secp256k1 signature recovery per call (x402 EIP-3009 checks, signed Tempo transactions, ERC-8004
 * proofs): libsecp256k1 against the pure-JS fallback, on the same 500 signatures in one run.
 */
async function signatureRecoveryFigure(): Promise<[string, string, string, string]> {
  const signer = privateKeyToAccount(generatePrivateKey());
  const signed = await Promise.all(Array.from({ length: 500 }, async (_, i) => ({ digest: keccak256(toHex(i)), signature: await signer.sign({ hash: keccak256(toHex(i)) }) })));
  const perCall = (recover: ReturnType<typeof signerRecovery>) => {
    const started = performance.now();
    for (const { digest, signature } of signed) if (recover(digest, signature) !== signer.address) throw new Error('recovered another signer');
    return (performance.now() - started) / signed.length;
  };
  const native = loadedSecp256k1();
  if (!native) return ['secp256k1 signature recovery per call, ms', 'libsecp256k1 did not load', `pure JS ${perCall(signerRecovery(null)).toFixed(3)}`, ''];
  const nativeMs = median([perCall(signerRecovery(native)), perCall(signerRecovery(native)), perCall(signerRecovery(native))]);
  const pureMs = median([perCall(signerRecovery(null)), perCall(signerRecovery(null)), perCall(signerRecovery(null))]);
  return ['secp256k1 signature recovery per call (libsecp256k1), ms', nativeMs.toFixed(3), `pure JS (ox over @noble/curves) ${pureMs.toFixed(3)}`, (nativeMs / pureMs).toFixed(3)];
}

/** Sequential transfers through the chain ports features use. */
async function portLatencies(embedded: EmbeddedChains): Promise<{ tempo: number[]; solana: number[] }> {
  const { tempo, solana } = await embeddedChainPorts(embedded);
  await new Faucet({ chains: embedded }).fund('eip155:4217', tempo.serviceAddress, 1_000_000n);
  await new Faucet({ chains: embedded }).fund(solana.network, solana.serviceAddress, 1_000_000n);
  const memo = `0x${'ab'.repeat(32)}` as const;
  const times = { tempo: [] as number[], solana: [] as number[] };
  const to = { evm: '0x7000000000000000000000000000000000000007', solana: (await generateKeyPairSigner()).address } as const;
  for (let i = 0; i < TRANSFERS; i++) {
    let started = performance.now();
    await tempo.transfer(to.evm, 1n, memo);
    times.tempo.push(performance.now() - started);
    started = performance.now();
    await solana.transfer(to.solana, 1n, `bench:${i}`);
    times.solana.push(performance.now() - started);
  }
  return times;
}

/** Median time to reopen Solana (replaying its whole journal) after `transactions` mints. */
async function solanaReplayMs(transactions: number): Promise<number> {
  const database = await openDatabase({ dataDir: null });
  await migrate(database);
  const chain = await EmbeddedSolana.open(database.db);
  const owner = (await generateKeyPairSigner()).address;
  for (let i = 0; i < transactions; i++) await chain.mintTo(owner, 1n);
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await EmbeddedSolana.open(database.db);
    times.push(performance.now() - started);
  }
  await database.close();
  return median(times);
}
