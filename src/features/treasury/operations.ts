import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { notFound } from '../../errors.js';
import { formatUsd } from '../../money.js';
import type { AiProvider } from '../../providers/ai/index.js';
import { recordAudit } from '../../audit/store.js';
import type { PaidCaller } from '../employers/index.js';
import type { EmployersService } from '../employers/index.js';
import { percentagesToBps, rebalanceTarget } from './allocation.js';
import { dollars, percent2, planOptimization, rewriteAdvice, type Recommendation } from './optimizer.js';
import type { TreasuryService } from './service.js';
import { findAuditDetails } from '../../audit/store.js';

/**
 * Yield credited to the account so far. The yield router records sources, their APYs and each
 * account's allocation, but credits nothing: no yield has accrued to any treasury on chain, and
 * the treasury contract is the ledger. It is therefore zero, stated rather than guessed
 * (docs/decisions.md); a router that credits yield would be read here.
 */
export const ACCRUED_YIELD_UNITS = 0n;

export interface OwnerTreasury {
  employer_id: string;
  employer_account_id: string;
  token: string;
  available_usd: string;
  locked_usd: string;
  total_usd: string;
}

export interface YieldSummary {
  employer_id: string;
  apy_bps: number;
  apy_percent: number;
  sources: { name: string; apy_bps: number; allocation_bps: number }[];
  available_usd: string;
  locked_usd: string;
  total_usd: string;
  projected_annual_yield_usd: string;
}

/** Spec 2.9, plus `sources`, `recommended_apy_percent`, `current_projected_annual_yield_usd` and `advice_source`. */
export interface OptimizationResult {
  employerId: string;
  employerAdminWallet: string;
  employerAccountId: string;
  question: string | null;
  summary: { available_usd: string; locked_usd: string; total_usd: string; current_apy_percent: number; accrued_yield_usd: string };
  suggestion: string;
  recommendations: Recommendation[];
  sources: { name: string; apy_bps: number }[];
  current_allocation: number[];
  recommended_allocation: number[];
  recommended_apy_percent: number;
  current_projected_annual_yield_usd: string;
  projected_annual_yield_usd: string;
  advice_source: 'deterministic' | 'ai';
  analyzedAt: string;
}

export type SessionAction = 'balance' | 'yield' | 'rebalance' | 'headcount';

export interface SessionRequest {
  action: SessionAction;
  employerId: string;
  allocation?: number[] | undefined;
  params?: { targetAllocation?: number[] | undefined } | undefined;
}

/** What a rebalance's audit entry keeps (details of `treasury.rebalanced`). */
interface RecordedRebalance {
  allocation_bps: number[];
  previous_allocation_bps: number[];
  tx_hash: string;
}

/** The paid call behind a session action: its request, and its fee (a redeemed one was paid and served before). */
export interface SessionContext {
  requestId: string;
  paymentId: string;
  redeemed: boolean;
}

export type SessionResult =
  | { employerId: string; availableUsd: string; lockedUsd: string; totalUsd: string }
  | { employerId: string; apyBps: number; apyPercent: number; sources: { name: string; apyBps: number; allocationBps: number }[] }
  | { employerId: string; activeEmployees: number }
  | { employerId: string; allocation_bps: number[]; previous_allocation_bps: number[]; tx_hash: string };

/**
 * The treasury's reads and actions for the owner routes and the paid routes. The routes have
 * already authorised the caller for the employer (owner bearer, or a paid caller acting for it).
 */
export class TreasuryOperations {
  constructor(
    private readonly deps: {
      treasury: TreasuryService;
      employers: EmployersService;
      database: Database;
      ai: AiProvider;
    },
  ) {}

  /** GET /api/employers/{id}/treasury: the owner's balances; another tenant's id is a 404. */
  async ownerTreasury(caller: Caller, employerId: string): Promise<OwnerTreasury> {
    await this.deps.employers.requireOwned(this.deps.database.db, caller, employerId);
    const { accountId, available, locked } = await this.deps.treasury.account(employerId);
    return {
      employer_id: employerId,
      employer_account_id: accountId.toString(),
      token: this.deps.treasury.token,
      available_usd: formatUsd(available),
      locked_usd: formatUsd(locked),
      total_usd: formatUsd(available + locked),
    };
  }

  /** GET /api/yield: the caller's own employer (they own at most one); none is a 404. */
  async yieldSummary(caller: Caller): Promise<YieldSummary> {
    const employerId = caller.ownedEmployerId;
    if (!employerId) throw notFound('Employer');
    const { account, yield: position } = await this.deps.treasury.position(employerId);
    const plan = planOptimization({ available: account.available, locked: account.locked, sources: position.sources });
    const total = account.available + account.locked;
    return {
      employer_id: employerId,
      apy_bps: position.blendedApyBps,
      apy_percent: position.blendedApyBps / 100,
      sources: position.sources.map((s) => ({ name: s.name, apy_bps: s.apyBps, allocation_bps: s.allocationBps })),
      available_usd: formatUsd(account.available),
      locked_usd: formatUsd(account.locked),
      total_usd: formatUsd(total),
      projected_annual_yield_usd: formatUsd(plan.currentProjectedAnnualYield),
    };
  }

  /** POST /api/mpp/treasury/optimize: the deterministic plan, its texts reworded by the AI when it can. */
  async optimize(employerId: string, question: string | null): Promise<OptimizationResult> {
    const { account, yield: position } = await this.deps.treasury.position(employerId);
    const plan = planOptimization({ available: account.available, locked: account.locked, sources: position.sources });
    const total = account.available + account.locked;
    const facts = {
      available_usd: dollars(account.available),
      locked_usd: dollars(account.locked),
      total_usd: dollars(total),
      sources: position.sources.map((s, i) => ({
        name: s.name,
        apy_percent: percent2(s.apyBps),
        current_allocation_percent: percent2(s.allocationBps),
        recommended_allocation_percent: percent2(plan.recommendedAllocation[i] ?? 0),
      })),
      current_apy_percent: percent2(plan.currentApyCentiBps / 100n),
      recommended_apy_percent: percent2(plan.recommendedApyCentiBps / 100n),
      current_projected_annual_yield_usd: dollars(plan.currentProjectedAnnualYield),
      projected_annual_yield_usd: dollars(plan.projectedAnnualYield),
    };
    const advice = await rewriteAdvice(this.deps.ai, plan, facts, question);
    return {
      employerId,
      employerAdminWallet: account.admin,
      employerAccountId: account.accountId.toString(),
      question,
      summary: {
        available_usd: formatUsd(account.available),
        locked_usd: formatUsd(account.locked),
        total_usd: formatUsd(total),
        current_apy_percent: position.blendedApyBps / 100,
        accrued_yield_usd: formatUsd(ACCRUED_YIELD_UNITS),
      },
      suggestion: advice.suggestion,
      recommendations: advice.recommendations,
      sources: position.sources.map((s) => ({ name: s.name, apy_bps: s.apyBps })),
      current_allocation: plan.currentAllocation,
      recommended_allocation: plan.recommendedAllocation,
      // Hundredths of a basis point -> percent with up to 4 decimals, from the integer.
      recommended_apy_percent: Number(plan.recommendedApyCentiBps) / 10_000,
      current_projected_annual_yield_usd: formatUsd(plan.currentProjectedAnnualYield),
      projected_annual_yield_usd: formatUsd(plan.projectedAnnualYield),
      advice_source: advice.source,
      analyzedAt: this.deps.database.clock.now().toISOString(),
    };
  }

  /** POST /api/mpp/agent/session/treasury: one action's result (the route wraps it in the envelope). */
  async sessionAction(request: SessionRequest, paid: PaidCaller, context: SessionContext): Promise<SessionResult> {
    const { employerId } = request;
    switch (request.action) {
      case 'balance': {
        const { available, locked } = await this.deps.treasury.account(employerId);
        return { employerId, availableUsd: formatUsd(available), lockedUsd: formatUsd(locked), totalUsd: formatUsd(available + locked) };
      }
      case 'yield': {
        const { yield: position } = await this.deps.treasury.position(employerId);
        return {
          employerId,
          apyBps: position.blendedApyBps,
          apyPercent: position.blendedApyBps / 100,
          sources: position.sources.map((s) => ({ name: s.name, apyBps: s.apyBps, allocationBps: s.allocationBps })),
        };
      }
      case 'headcount':
        return { employerId, activeEmployees: await this.deps.employers.countActiveEmployees(employerId) };
      case 'rebalance':
        return this.rebalance(request, paid, context);
    }
  }

  private async rebalance(request: SessionRequest, paid: PaidCaller, context: SessionContext) {
    const { employerId } = request;
    const target = rebalanceTarget(request);
    // A redeemed fee (its first answer was lost) gets the rebalance it bought: writing the same
    // allocation again would be harmless on chain, but it would answer another tx_hash, a
    // previous allocation that is already the target, and audit two rebalances for one fee. A
    // crash between the chain write and its audit entry leaves nothing here: the write is redone
    // then (the same allocation) and audited once.
    if (context.redeemed) {
      // Its audit entry is the one record a rebalance leaves besides the chain.
      const earlier = (await findAuditDetails(this.deps.database.db, { employerId, action: 'treasury.rebalanced', key: 'payment_id', value: context.paymentId })) as RecordedRebalance | null;
      if (earlier) return { employerId, allocation_bps: earlier.allocation_bps, previous_allocation_bps: earlier.previous_allocation_bps, tx_hash: earlier.tx_hash };
    }
    const { account, yield: position } = await this.deps.treasury.position(employerId);
    const allocationBps = percentagesToBps(
      target.values,
      target.field,
      position.sources.map((s) => s.name),
    );
    const previous = position.sources.map((s) => s.allocationBps);
    const write = await this.deps.treasury.rebalance(account.accountId, allocationBps);
    await recordAudit(this.deps.database.db, {
      actorUserId: paid.kind === 'user' ? paid.caller.userId : null,
      actorKind: paid.kind === 'agent_key' ? 'agent' : 'user',
      action: 'treasury.rebalanced',
      employerId,
      targetType: 'treasury_account',
      targetId: account.accountId.toString(),
      details: { allocation_bps: allocationBps, previous_allocation_bps: previous, tx_hash: write.txHash, payment_id: context.paymentId, via: paid.kind },
      requestId: context.requestId,
    });
    return { employerId, allocation_bps: allocationBps, previous_allocation_bps: previous, tx_hash: write.txHash };
  }
}
