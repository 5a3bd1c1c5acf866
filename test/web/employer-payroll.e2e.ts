import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, expectNoPageErrors, freshEvmAddress, launchBrowser, screenshot, sessionOf, signedIn, stepToSubmit, uniqueTag, visibleAlerts, visit, waitFor } from './support/harness.js';

/** Flow 1: the owner adds two employees, funds the treasury from the faucet and runs payroll to confirmed. */
/** The first run's pay period (a month long ago, so a later run of the current month does not overlap it). */
const PERIOD = { start: '2026-01-01', end: '2026-01-31' };
const FLOW = 'employer-payroll';

interface Employee {
  id: string;
  email: string;
  full_name: string;
  annual_salary_usd: string | null;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function team(page: Page, employerId: string): Promise<Employee[]> {
  return (await apiAs<{ employees: Employee[] }>(page, `/api/employers/${employerId}/team?limit=500`)).employees;
}

async function treasuryTotal(page: Page, employerId: string): Promise<number> {
  return Number((await apiAs<{ total_usd: string }>(page, `/api/employers/${employerId}/treasury`)).total_usd);
}

describe('employer: team, treasury and a payroll run', () => {
  it('adds two employees, funds the treasury and pays them', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const { owned_employer_id: employerId } = await sessionOf(page);
    expect(employerId, 'the demo owner owns the demo employer').toBeTruthy();

    // Two employees through /dashboard/team/add.
    const tag = uniqueTag();
    const people = [1, 2].map((n) => ({
      name: `E2E Person ${tag} ${n}`,
      email: `e2e-${tag}-${n}@example.com`,
      wallet: freshEvmAddress(),
      salary: String(50_000 + n * 10_000),
    }));
    const added: Employee[] = [];
    for (const person of people) {
      await visit(page, FLOW, '/dashboard/team/add');
      await page.getByLabel('Full name', { exact: true }).fill(person.name);
      await page.getByLabel('Email', { exact: true }).fill(person.email);
      await page.getByLabel('Wallet address', { exact: true }).fill(person.wallet);
      await page.getByLabel('Annual salary (USD)', { exact: true }).fill(person.salary);
      await page.getByRole('button', { name: 'Add employee', exact: true }).click();
      const employees = await waitFor(
        `${person.email} in the team (page alerts: see screenshot)`,
        () => team(page, employerId!),
        (list) => list.some((e) => e.email === person.email),
      );
      added.push(employees.find((e) => e.email === person.email)!);
      expect(await visibleAlerts(page)).toEqual([]);
      await screenshot(page, FLOW, `/dashboard/team/add-done-${added.length}`);
    }
    await visit(page, FLOW, '/dashboard/team');
    for (const person of people) await page.getByText(person.name).first().waitFor({ state: 'visible' });

    // Treasury: fund from the faucet (a month of the whole team's pay, so the run below pays for
    // itself however often this flow runs against one server); the treasury's total goes up by it.
    const monthly = (await team(page, employerId!)).reduce((sum, e) => sum + Number(e.annual_salary_usd ?? 0) / 12, 0);
    const amount = Math.ceil(monthly) + 1;
    const before = await treasuryTotal(page, employerId!);
    await visit(page, FLOW, '/dashboard/treasury');
    await page.getByLabel('Amount (USD)', { exact: true }).fill(String(amount));
    await page.getByRole('button', { name: 'Fund from faucet', exact: true }).click();
    await waitFor(`the treasury total to grow by $${amount}`, () => treasuryTotal(page, employerId!), (total) => total >= before + amount - 0.01, 30_000);
    expect(await visibleAlerts(page)).toEqual([]);
    await screenshot(page, FLOW, '/dashboard/treasury-funded');

    // Payroll wizard: a pay period, then step through to "Submit payroll".
    await visit(page, FLOW, '/dashboard/payroll/new');
    await page.getByLabel('Pay period start').fill(PERIOD.start);
    await page.getByLabel('Pay period end').fill(PERIOD.end);
    const submit = await stepToSubmit(page, async (step) => step > 1 && screenshot(page, FLOW, `/dashboard/payroll/new-step-${step}`));
    await waitFor('"Submit payroll" to be enabled', () => submit.isEnabled(), Boolean);
    await submit.click();
    await page.waitForURL(/\/dashboard\/payroll\/(?!new$)[^/]+$/, { timeout: 60_000 });
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    await page.locator('h1').first().waitFor({ state: 'visible' });

    // The run page updates itself until the run is confirmed (no reload).
    const main = page.locator('main');
    const text = await waitFor(
      `run ${runId} to show "confirmed"`,
      () => main.innerText(),
      (t) => /\bconfirmed\b/i.test(t) || /\bfailed\b/i.test(t),
      120_000,
      500,
    );
    await screenshot(page, FLOW, '/dashboard/payroll/run-confirmed');
    expect(text, 'the run page').not.toMatch(/\bfailed\b/i);
    // Paid in several transactions (two people each, global-setup), every one shown paid.
    const batches = await page.getByTestId('run-batches').innerText();
    const [, paidCount, batchCount] = /(\d+) of (\d+) transactions paid/.exec(batches) ?? [];
    expect(Number(batchCount), batches).toBeGreaterThan(1);
    expect(paidCount, batches).toBe(batchCount);

    // Both new employees were paid by that run.
    const { transactions } = await apiAs<{ transactions: { payroll_run_id: string; employee_id: string }[] }>(page, '/api/transactions?limit=100');
    const paid = new Set(transactions.filter((t) => t.payroll_run_id === runId).map((t) => t.employee_id));
    for (const employee of added) expect(paid.has(employee.id), `${employee.email} is in run ${runId}`).toBe(true);

    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('warns before paying a period already paid, people just paid and an outlier amount, and goes on only once the owner confirms', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    await visit(page, FLOW, '/dashboard/payroll/new');
    await page.getByLabel('Pay period start').fill(PERIOD.start);
    await page.getByLabel('Pay period end').fill(PERIOD.end);
    const amounts = page.getByLabel(/^Amount for .* \(USD\)$/);
    await amounts.first().fill('60000'); // six months of pay; the treasury still covers the run
    await page.getByRole('button', { name: /^(next|continue|review)\b/i }).first().click();

    const warnings = page.getByTestId('run-warnings');
    await warnings.waitFor({ state: 'visible', timeout: 20_000 });
    const text = await warnings.innerText();
    expect(text).toMatch(/Another payroll run already paid \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}, which overlaps this pay period/);
    expect(text).toMatch(/\$60,000\.00 for .* is more than 50% away from their salary for the period/);
    expect(text).toMatch(/was paid by another run/);
    const next = page.getByRole('button', { name: /^(continue|prepare the transaction)\b/i });
    expect(await next.isEnabled()).toBe(false);
    await screenshot(page, FLOW, '/dashboard/payroll/new-warnings');
    await page.getByLabel(/I have checked/).check();
    await waitFor('the wizard to go on once confirmed', () => next.isEnabled(), Boolean);
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
