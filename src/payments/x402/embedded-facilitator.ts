import {
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Address as SolanaAddress,
  type SignatureBytes,
  type Transaction,
} from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, SupportedResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { TransactionOnchainFailureError, type FacilitatorSvmSigner } from '@x402/svm';
import { registerExactSvmScheme } from '@x402/svm/exact/facilitator';
import { concat, encodeFunctionData, type Abi, type Address, type Hex } from 'viem';
import { EMBEDDED_POLLING_MS, type EmbeddedEvmChain } from '../../chains/embedded/devnet.js';
import type { LocalChains } from '../../chains/embedded/index.js';
import type { LocalSolana } from '../../chains/embedded/solana.js';
import { Eip3009SettlementBatcher } from './settlement-batcher.js';

export interface EmbeddedFacilitatorHooks {
  /**
   * Runs before a rail C transaction is sent, with its message and signature (known once the fee
   * payer signed): the gate records the signature, so a crash mid-settlement can be looked up.
   */
  beforeSvmSend?: (messageBytes: ArrayLike<number>, signature: string) => Promise<void>;
}

/** The embedded chains mine on send; a receipt that is not there within this is not coming. */
const CONFIRMATION_TIMEOUT_MS = 10_000;

/**
 * Local mode's x402 facilitator: the library's own `x402Facilitator` with the exact EVM and SVM
 * schemes, whose signers talk to the embedded chains in process (never the network).
 */
export function embeddedFacilitator(embedded: LocalChains, hooks: EmbeddedFacilitatorHooks = {}): FacilitatorClient {
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer: embeddedEvmSigner(embedded.base), networks: `eip155:${embedded.base.chain.id}` });
  registerExactSvmScheme(facilitator, { signer: embeddedSvmSigner(embedded.solana, hooks), networks: embedded.solana.network as Network });
  // The resource server wants the HTTP client's shape, whose getSupported is asynchronous.
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

/**
 * Reads through the embedded chain's public client; writes go through the operator's connection,
 * whose nonces come from the shared ledger like every other operator write's, and settlements
 * through the group-commit batcher.
 */
export function embeddedEvmSigner(chain: EmbeddedEvmChain): ReturnType<typeof toFacilitatorEvmSigner> {
  const { connection, operator } = chain;
  const client = connection.publicClient;
  const send = async (to: Hex, data: Hex) => (await connection.write({ to, data })).transactionHash;
  // Settlements go out together while one is in flight (group commit); anything else goes alone.
  const settlements = new Eip3009SettlementBatcher(connection);
  return toFacilitatorEvmSigner(
    {
      address: operator.address,
      readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      getCode: (args) => client.getCode(args),
      waitForTransactionReceipt: ({ hash, timeout }) =>
        client.waitForTransactionReceipt({ hash, timeout, pollingInterval: EMBEDDED_POLLING_MS, retryCount: 0 }),
      writeContract: ({ address, abi, functionName, args, dataSuffix }) => {
        const encoded = encodeFunctionData({ abi: abi as Abi, functionName, args });
        const data = dataSuffix ? concat([encoded, dataSuffix]) : encoded;
        if (functionName !== 'transferWithAuthorization') return send(address, data);
        const [authorizer, , , , , nonce] = args as [Address, Address, bigint, bigint, bigint, Hex];
        return settlements.settle({ token: address, data, authorizer, nonce });
      },
      sendTransaction: ({ to, data }) => send(to, data),
    },
    { confirmationTimeoutMs: CONFIRMATION_TIMEOUT_MS },
  );
}

/**
 * The fee payer is the embedded chain's operator: it co-signs the client's partially signed
 * transfer, and LiteSVM simulates, runs and reports it. Like a real RPC with `skipPreflight`,
 * sending hands back the signature and the chain's verdict (e.g. `AlreadyProcessed` for a replay)
 * surfaces at confirmation, where the facilitator turns it into a refused settlement.
 */
export function embeddedSvmSigner(chain: LocalSolana, hooks: EmbeddedFacilitatorHooks = {}): FacilitatorSvmSigner {
  const feePayer = chain.operator;
  // Outcomes of this process's sends, read once by the confirmation that follows the send.
  const sendFailures = new Map<string, string>();

  const coSign = async (wireBase64: string): Promise<string> => {
    const transaction = decode(wireBase64);
    // The library's own signer does the same: sign the message bytes, merge the signature in.
    const [signatures] = await feePayer.signMessages([
      { content: transaction.messageBytes as unknown as Uint8Array, signatures: {} as Record<SolanaAddress, SignatureBytes> },
    ]);
    return getBase64EncodedWireTransaction({ ...transaction, signatures: { ...transaction.signatures, ...signatures } } as Transaction);
  };

  return {
    getAddresses: () => [feePayer.address],
    signTransaction: async (transaction, payer) => {
      if (payer !== feePayer.address) throw new Error(`no signer for fee payer ${payer}`);
      return coSign(transaction);
    },
    // LiteSVM checks every signature, so the fee payer's slot is filled before simulating (the
    // library has already checked the client's signatures).
    simulateTransaction: async (transaction) => {
      const outcome = await chain.trySimulate(await coSign(transaction));
      if (outcome.error) throw new Error(`Simulation failed: ${outcome.error}`);
    },
    sendTransaction: async (transaction) => {
      if (hooks.beforeSvmSend) {
        const decoded = decode(transaction);
        const feePayerSignature = decoded.signatures[feePayer.address];
        if (feePayerSignature) await hooks.beforeSvmSend(decoded.messageBytes, getBase58Decoder().decode(feePayerSignature));
      }
      const { signature, error } = await chain.sendTransaction(transaction);
      if (error) sendFailures.set(signature, error);
      return signature;
    },
    confirmTransaction: async (signature) => {
      const failure = sendFailures.get(signature);
      sendFailures.delete(signature);
      if (failure) throw new TransactionOnchainFailureError(`Transaction failed onchain: ${failure}`);
      const status = await chain.statusOf(signature as Parameters<LocalSolana['statusOf']>[0]);
      if (!status) throw new Error(`transaction ${signature} is unknown to the embedded chain`);
      if (status.error) throw new TransactionOnchainFailureError(`Transaction failed onchain: ${status.error}`);
    },
  };
}

function decode(wireBase64: string): Transaction & { signatures: Record<SolanaAddress, SignatureBytes | null> } {
  return getTransactionDecoder().decode(Buffer.from(wireBase64, 'base64')) as never;
}
