import type { Address, Signature } from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { MEMO_PROGRAM, type SolanaChain } from '../../chains/solana/solana-chain.js';
import { formatUsd } from '../../money.js';

export interface SolanaPolicy {
  /** Largest single payment, in base units. */
  perTxCap: bigint;
  /** Programs a payment's instructions may call. */
  allowedPrograms: ReadonlySet<string>;
}

/** Token transfers with their memo: the SPL token, associated-token-account and memo programs. */
export const DEFAULT_ALLOWED_PROGRAMS: ReadonlySet<string> = new Set([TOKEN_PROGRAM_ADDRESS, ASSOCIATED_TOKEN_PROGRAM_ADDRESS, MEMO_PROGRAM]);

export type PolicyOutcome = { sent: true; signature: Signature } | { sent: false; rejected: string } | { sent: false; error: string };

/**
 * The policy-enforcing server wallet for Solana payroll items (spec 4.5): it builds the exact
 * instructions it would sign and refuses, per payment, one over the per-transaction cap or one
 * calling a program outside the whitelist. A refusal is a per-item rejection, never a run failure.
 */
export class SolanaPolicyWallet {
  constructor(
    private readonly solana: SolanaChain,
    private readonly policy: SolanaPolicy,
  ) {}

  /** Sends the payment unless the policy refuses it; a refusal or a failed send is an outcome, not a throw. */
  async pay(to: Address, amount: bigint, reference: string): Promise<PolicyOutcome> {
    if (amount > this.policy.perTxCap) {
      return { sent: false, rejected: `amount ${formatUsd(amount)} is over the per-transaction cap of ${formatUsd(this.policy.perTxCap)}` };
    }
    try {
      const instructions = await this.solana.transferInstructions(to, amount, reference);
      const foreign = instructions.find((ix) => !this.policy.allowedPrograms.has(ix.programAddress));
      if (foreign) return { sent: false, rejected: `program ${foreign.programAddress} is not whitelisted` };
      const { signature } = await this.solana.sendInstructions(instructions);
      return { sent: true, signature };
    } catch (error) {
      return { sent: false, error: (error as Error).message };
    }
  }
}
