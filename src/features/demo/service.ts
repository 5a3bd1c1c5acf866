import { privateKeyToAccount } from 'viem/accounts';
import type { Chains } from '../../chains/index.js';
import type { Database } from '../../db/client.js';
import type { Faucet } from '../dev/index.js';
import { runTour, type LiveWallet, type TourOptions, type TourResult } from './agent.js';
import { DatabaseSpendBudget, UNCAPPED, type SpendBudget } from './spend-budget.js';

export interface DemoAgentOptions {
  mode: 'local' | 'live';
  /** Local mode: funds each run's fresh wallet. */
  faucet: Faucet | null;
  chains: Chains;
  /** Live mode: the wallet demos pay from; without it there is no demo. */
  liveWallet: LiveWallet | null;
  /** Keeps the live wallet's spending. */
  database: Database;
}

/** What a run needs from its request: where to call, when to stop, where to narrate. */
export type DemoRun = Omit<TourOptions, 'mode' | 'faucet' | 'chains' | 'liveWallet' | 'budget'>;

/** The demo agent: runs the paid-route tour from a fresh wallet (local) or the live wallet, within its spend cap. */
export class DemoAgentService {
  /** False in live mode without a wallet, or in local mode without a faucet: there is no demo then. */
  readonly available: boolean;
  // Live: the wallet's spending in the database; local runs each pay from their own fresh wallet.
  private readonly budget: SpendBudget;

  constructor(private readonly options: DemoAgentOptions) {
    const { mode, liveWallet, faucet } = options;
    this.available = mode === 'live' ? Boolean(liveWallet) : Boolean(faucet);
    this.budget = liveWallet ? new DatabaseSpendBudget(options.database, privateKeyToAccount(liveWallet.privateKey).address, liveWallet.spendCapUsd) : UNCAPPED;
  }

  run(run: DemoRun): Promise<TourResult> {
    const { mode, faucet, chains, liveWallet } = this.options;
    return runTour({ mode, faucet, chains, liveWallet, budget: this.budget, ...run });
  }
}
