import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../../../test/support/shared-database.js';
import { DatabaseSpendBudget } from './spend-budget.js';

/** The live demo wallet's cap, kept in the database: shared by instances, never overshot. */
let shared: Awaited<ReturnType<typeof openSharedDatabase>>;

beforeAll(async () => {
  shared = await openSharedDatabase();
});
afterAll(() => shared?.close());

describe('DatabaseSpendBudget', () => {
  it('never overshoots the cap under concurrent reservations from two instances', async () => {
    const wallet = '0x00000000000000000000000000000000000000a1';
    const a = new DatabaseSpendBudget(shared.first, wallet, 100_000n);
    const b = new DatabaseSpendBudget(shared.second, wallet, 100_000n);
    const granted = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).reserve(7_000n)));
    expect(granted.filter(Boolean)).toHaveLength(14);
    expect(await a.spent()).toBe(98_000n);
    expect(await b.spent()).toBe(98_000n);
    // What is left fits a smaller payment, nothing more.
    expect(await b.reserve(3_000n)).toBe(false);
    expect(await a.reserve(2_000n)).toBe(true);
  });

  it('gives back a released reservation, and a restart (a new handle) starts from what was spent', async () => {
    const wallet = '0x00000000000000000000000000000000000000a2';
    const budget = new DatabaseSpendBudget(shared.first, wallet, 10_000n);
    expect(await budget.reserve(10_000n)).toBe(true);
    expect(await budget.reserve(1n)).toBe(false);
    await budget.release(4_000n);
    const restarted = new DatabaseSpendBudget(shared.second, wallet, 10_000n);
    expect(await restarted.spent()).toBe(6_000n);
    expect(await restarted.reserve(4_001n)).toBe(false);
    expect(await restarted.reserve(4_000n)).toBe(true);
  });

  it('refuses a single payment above the cap and records nothing', async () => {
    const wallet = '0x00000000000000000000000000000000000000a3';
    const budget = new DatabaseSpendBudget(shared.first, wallet, 5_000n);
    expect(await budget.reserve(5_001n)).toBe(false);
    expect(await budget.spent()).toBe(0n);
  });
});
