import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { createAiProvider, OfflineAiProvider, type AiProvider } from '../../providers/ai/index.js';
import { percentagesToBps, rebalanceTarget } from './allocation.js';
import { dollars, numbersIn, planOptimization, projectedAnnualYield, recommendAllocation, rewriteAdvice, type YieldSource } from './optimizer.js';

const USD = 1_000_000n;
const SOURCES: YieldSource[] = [
  { name: 'treasury-bills', apyBps: 420, allocationBps: 10_000 },
  { name: 'money-market', apyBps: 510, allocationBps: 0 },
  { name: 'lending', apyBps: 630, allocationBps: 0 },
];

describe('the deterministic optimiser', () => {
  it('keeps the reserve in the lowest-yield source and fills the others from the top, each at most 50%', () => {
    expect(recommendAllocation({ available: 1000n * USD, locked: 0n, sources: SOURCES })).toEqual([2000, 3000, 5000]);
    // A quarter locked for payroll: the reserve grows to cover it.
    expect(recommendAllocation({ available: 750n * USD, locked: 250n * USD, sources: SOURCES })).toEqual([2500, 2500, 5000]);
    // Mostly locked: almost everything stays liquid; the locked share rounds up.
    expect(recommendAllocation({ available: 1n, locked: 2n, sources: SOURCES })).toEqual([6667, 0, 3333]);
    expect(recommendAllocation({ available: 0n, locked: 5n, sources: SOURCES })).toEqual([10_000, 0, 0]);
    // The reserve is the lowest APY wherever it is listed; sources no better than it get nothing.
    const shuffled = [SOURCES[2]!, SOURCES[0]!, { name: 'flat', apyBps: 420, allocationBps: 0 }];
    expect(recommendAllocation({ available: USD, locked: 0n, sources: shuffled })).toEqual([5000, 5000, 0]);
    expect(recommendAllocation({ available: USD, locked: 0n, sources: [SOURCES[0]!] })).toEqual([10_000]);
    expect(recommendAllocation({ available: USD, locked: 0n, sources: [] })).toEqual([]);
  });

  it('projects in integers, rounding down', () => {
    expect(projectedAnnualYield(1000n * USD, SOURCES, [2500, 2500, 5000])).toBe(54_750_000n);
    expect(projectedAnnualYield(1n, SOURCES, [10_000, 0, 0])).toBe(0n);
    expect(projectedAnnualYield(123_456_789n, SOURCES, [3333, 3333, 3334])).toBe((123_456_789n * (3333n * 420n + 3333n * 510n + 3334n * 630n)) / 100_000_000n);
    expect(dollars(1_234_567_890n)).toBe('1,234.56');
  });

  it('explains the plan with the numbers it computed', () => {
    const plan = planOptimization({ available: 750n * USD, locked: 250n * USD, sources: SOURCES });
    expect(plan.recommendedAllocation).toEqual([2500, 2500, 5000]);
    expect(plan.currentProjectedAnnualYield).toBe(42n * USD);
    expect(plan.projectedAnnualYield).toBe(54_750_000n);
    expect(plan.recommendations.map((r) => [r.id, r.impact])).toEqual([
      ['rebalance', 'high'],
      ['liquidity-reserve', 'high'],
      ['concentration-limit', 'medium'],
    ]);
    expect(plan.recommendations[0]!.text).toContain('from 4.20% to 5.47%');
    expect(plan.recommendations[0]!.text).toContain('$12.75 more a year on $1,000.00');
    expect(plan.recommendations[1]!.text).toContain('$250.00 locked for payroll');
    expect(plan.suggestion).toContain('about $54.75 a year instead of $42.00');

    const held = planOptimization({ available: 1000n * USD, locked: 0n, sources: SOURCES.map((s, i) => ({ ...s, allocationBps: [2000, 3000, 5000][i]! })) });
    expect(held.recommendations[0]!.id).toBe('hold');
    expect(held.suggestion).toMatch(/already the best/);

    const empty = planOptimization({ available: 0n, locked: 0n, sources: SOURCES });
    expect(empty.recommendations[0]).toMatchObject({ id: 'fund-treasury', impact: 'high' });
    expect(empty.projectedAnnualYield).toBe(0n);
  });
});

describe('rebalance percentages', () => {
  const names = SOURCES.map((s) => s.name);
  const refused = (values: unknown[], field = 'allocation') => {
    try {
      percentagesToBps(values, field, names);
    } catch (error) {
      return error as { status: number; details: { field: string }; message: string };
    }
    throw new Error('accepted');
  };

  it('converts exactly, without float arithmetic', () => {
    expect(percentagesToBps([33.33, 33.33, 33.34], 'allocation', names)).toEqual([3333, 3333, 3334]);
    expect(percentagesToBps([0.1, 0.2, 99.7], 'allocation', names)).toEqual([10, 20, 9970]);
    expect(percentagesToBps([100, 0, 0], 'allocation', names)).toEqual([10_000, 0, 0]);
  });

  it('names the field of every violation', () => {
    expect(refused([50, 50])).toMatchObject({ status: 400, details: { field: 'allocation' } });
    expect(refused([50, 50]).message).toMatch(/3 entries, one per yield source \(treasury-bills, money-market, lending\)/);
    expect(refused([-1, 51, 50])).toMatchObject({ details: { field: 'allocation.0' } });
    expect(refused([0, 100.5, 0])).toMatchObject({ details: { field: 'allocation.1' } });
    expect(refused([33.333, 33.333, 33.334]).message).toMatch(/allocation\.0: must have at most 2 decimal places/);
    expect(refused([5e-7, 50, 50]).message).toMatch(/at most 2 decimal places/);
    expect(refused([Number.NaN, 50, 50]).message).toMatch(/finite/);
    expect(refused([Number.POSITIVE_INFINITY, 50, 50]).message).toMatch(/finite/);
    expect(refused([33.33, 33.33, 33.33])).toMatchObject({ details: { field: 'allocation' } });
    expect(refused([33.33, 33.33, 33.33]).message).toMatch(/sum to exactly 100; the entries sum to 99\.99/);
    expect(refused([0, 0, 101], 'params.targetAllocation')).toMatchObject({ details: { field: 'params.targetAllocation.2' } });
  });

  it('takes the target from allocation or params.targetAllocation, and refuses two different ones', () => {
    expect(rebalanceTarget({ allocation: [1, 2] })).toEqual({ values: [1, 2], field: 'allocation' });
    expect(rebalanceTarget({ params: { targetAllocation: [3] } })).toEqual({ values: [3], field: 'params.targetAllocation' });
    expect(rebalanceTarget({ allocation: [3], params: { targetAllocation: [3] } })).toEqual({ values: [3], field: 'allocation' });
    expect(() => rebalanceTarget({ allocation: [3], params: { targetAllocation: [4] } })).toThrow(/allocation: differs from params.targetAllocation/);
    expect(() => rebalanceTarget({})).toThrow(/allocation: is required/);
  });
});

describe('the AI rewrite', () => {
  const plan = planOptimization({ available: 750n * USD, locked: 250n * USD, sources: SOURCES });
  const facts = { total_usd: '1,000.00', projected_annual_yield_usd: '54.75' };
  const replying = (answer: unknown): AiProvider => ({
    name: 'openai',
    complete: () => Promise.resolve(typeof answer === 'string' ? answer : JSON.stringify(answer)),
  });
  const good = {
    suggestion: 'Shift idle cash into lending and money-market: about $54.75 a year instead of $42.00.',
    recommendations: [
      { id: 'rebalance', text: 'Rebalance so the blended APY rises from 4.20% to 5.47%.' },
      { id: 'liquidity-reserve', text: 'Leave 25% in treasury-bills to cover the $250.00 locked for payroll.' },
      { id: 'concentration-limit', text: 'Cap every higher-yield source at 50%.' },
    ],
  };

  it('offline keeps the deterministic texts', async () => {
    expect(await rewriteAdvice(new OfflineAiProvider(), plan, facts, 'How do I earn more?')).toEqual({
      suggestion: plan.suggestion,
      recommendations: plan.recommendations,
      source: 'deterministic',
    });
  });

  it('accepts a rewording that keeps the ids and only uses the computed numbers; impacts stay the engine’s', async () => {
    const advice = await rewriteAdvice(replying(`Here you go:\n\`\`\`json\n${JSON.stringify(good)}\n\`\`\``), plan, facts, null);
    expect(advice.source).toBe('ai');
    expect(advice.suggestion).toBe(good.suggestion);
    expect(advice.recommendations.map((r) => [r.id, r.impact, r.text])).toEqual(
      plan.recommendations.map((r, i) => [r.id, r.impact, good.recommendations[i]!.text]),
    );
  });

  it.each([
    ['an invented number', { ...good, suggestion: 'Earn $80.00 a year by moving everything to lending.' }],
    ['a missing recommendation', { ...good, recommendations: good.recommendations.slice(1) }],
    ['renamed ids', { ...good, recommendations: good.recommendations.map((r) => ({ ...r, id: `x-${r.id}` })) }],
    ['an empty text', { ...good, suggestion: '   ' }],
    ['an overlong text', { ...good, suggestion: 'a'.repeat(601) }],
    ['the wrong shape', { advice: 'move funds' }],
    ['prose', 'I would move funds into lending.'],
  ])('falls back to the deterministic texts on %s', async (_why, answer) => {
    const advice = await rewriteAdvice(replying(answer), plan, facts, 'Should I move everything?');
    expect(advice).toEqual({ suggestion: plan.suggestion, recommendations: plan.recommendations, source: 'deterministic' });
  });

  it('reads numbers the way texts print them', () => {
    expect(numbersIn('from 4.20% to 5.47%, $1,234.50 and 20 or 007')).toEqual(['4.2', '5.47', '1234.5', '20', '7']);
  });

  describe('with a real adapter against a stub that fails', () => {
    let stub: LoopbackServer;
    beforeAll(async () => {
      stub = await serveOnLoopback(async () => {
        await new Promise((r) => setTimeout(r, 500));
        return Response.json({ choices: [{ message: { content: JSON.stringify(good) } }] });
      });
    });
    afterAll(() => stub.close());

    it('a timeout keeps the deterministic texts', async () => {
      const ai = createAiProvider({ provider: 'openai', apiKey: 'k', baseUrl: stub.url, model: 'm', timeoutMs: 100 });
      const advice = await rewriteAdvice(ai, plan, facts, null);
      expect(advice.source).toBe('deterministic');
    });
  });
});
