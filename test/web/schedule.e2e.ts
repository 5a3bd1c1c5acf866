import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, choose, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, stepToSubmit, visibleAlerts, visit, waitFor } from './support/harness.js';

/**
 * Pay schedules (issue 29): the owner sets a monthly schedule in Settings, sees the next pay date
 * and its expected pay on the overview, and the wizard starts from the scheduled period and pay
 * date; the run page shows the pay date the run was made for.
 */
const FLOW = 'schedule';

interface Schedule {
  frequency: string;
  next_pay_date: string;
  next_period: { start: string; end: string };
}
interface Expected {
  total_usd: string;
  employees: { employee_id: string; expected_usd: string; payable: boolean }[];
}

/** The web app's formats: a day in UTC ("Nov 28, 2026"), dollars with cents. */
const day = (iso: string) => new Date(`${iso}T00:00:00Z`).toLocaleDateString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
const usd = (decimal: string) => Number(decimal).toLocaleString('en-US', { style: 'currency', currency: 'USD' });

const treasuryTotal = async (page: Page, employerId: string) => Number((await apiAs<{ total_usd: string }>(page, `/api/employers/${employerId}/treasury`)).total_usd);

/** Funds the treasury from the faucet on the treasury page (as the owner would). */
async function fundTreasury(page: Page, employerId: string, amount: number) {
  const before = await treasuryTotal(page, employerId);
  await visit(page, FLOW, '/dashboard/treasury');
  await page.getByLabel('Amount (USD)', { exact: true }).fill(String(amount));
  await page.getByRole('button', { name: 'Fund from faucet', exact: true }).click();
  await waitFor(`the treasury total to grow by $${amount}`, () => treasuryTotal(page, employerId), (total) => total >= before + amount - 0.01, 30_000);
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('pay schedule', () => {
  it('set in Settings, shown on the overview, pre-fills the wizard and dates the run', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const { owned_employer_id: employerId } = await sessionOf(page);
    expect(employerId).toBeTruthy();
    try {
      // Without a schedule (whatever another flow left), the overview's next payroll points to Settings.
      await apiAs(page, `/api/employers/${employerId}`, { method: 'PATCH', body: { pay_schedule: null } });
      await visit(page, FLOW, '/dashboard');
      await page.getByText('No pay schedule yet — set one in Settings.').waitFor({ state: 'visible' });
      await screenshot(page, FLOW, '/dashboard-no-schedule');

      // Settings: monthly on the 28th.
      await visit(page, FLOW, '/dashboard/settings');
      await choose(page, 'How often', 'monthly');
      await page.getByLabel(/^Pay day/).fill('28');
      await page.getByRole('button', { name: 'Save pay schedule', exact: true }).click();
      const schedule = await waitFor(
        'the schedule to be saved',
        async () => (await apiAs<{ pay_schedule: Schedule | null }>(page, `/api/employers/${employerId}`)).pay_schedule,
        (s) => s?.frequency === 'monthly',
      );
      await page.getByText(`Pay schedule saved. Next pay date: ${day(schedule!.next_pay_date)}.`).waitFor({ state: 'visible' });
      expect(await page.getByTestId('next-pay-date').innerText()).toBe(day(schedule!.next_pay_date));
      expect(await visibleAlerts(page)).toEqual([]);
      await screenshot(page, FLOW, '/dashboard/settings-schedule');

      // Overview: the next pay date and the server's expected pay for its period.
      const expected = await apiAs<Expected>(page, `/api/employers/${employerId}/payroll/expected`);
      await visit(page, FLOW, '/dashboard');
      await page.getByTestId('next-pay-date').waitFor({ state: 'visible' });
      expect(await page.getByTestId('next-pay-date').innerText()).toBe(day(schedule!.next_pay_date));
      expect(await page.getByTestId('next-pay-amount').innerText()).toBe(usd(expected.total_usd));
      await screenshot(page, FLOW, '/dashboard-next-pay-date');

      // Wizard: period and pay date from the schedule; amounts are the expected pay for the period.
      await visit(page, FLOW, '/dashboard/payroll/new');
      expect(await page.getByLabel('Pay period start').inputValue()).toBe(schedule!.next_period.start);
      expect(await page.getByLabel('Pay period end').inputValue()).toBe(schedule!.next_period.end);
      expect(await page.getByLabel('Pay date').inputValue()).toBe(schedule!.next_pay_date);
      const first = expected.employees.find((e) => e.payable)!;
      const amount = page.locator(`#amount-${first.employee_id}`);
      await waitFor('the expected pay in the amount', () => amount.inputValue(), (v) => v === Number(first.expected_usd).toFixed(2));
      await screenshot(page, FLOW, '/dashboard/payroll/new-prefilled');

      // Pay only that employee: fund the treasury for it, then step through and submit.
      await fundTreasury(page, employerId!, Math.ceil(Number(first.expected_usd)) + 1);
      await visit(page, FLOW, '/dashboard/payroll/new');
      await waitFor('the expected pay in the amount', () => amount.inputValue(), (v) => v === Number(first.expected_usd).toFixed(2));
      await page.getByRole('button', { name: 'Select none', exact: true }).click();
      await page.locator(`#pay-${first.employee_id}`).check();
      const submit = await stepToSubmit(page, async (step) => {
        if (step === 2) expect(await page.locator('main').innerText()).toContain(`Pay date: ${day(schedule!.next_pay_date)}`);
      });
      await screenshot(page, FLOW, '/dashboard/payroll/new-submit');
      await waitFor('"Submit payroll" to be enabled', () => submit.isEnabled(), Boolean);
      await submit.click();
      await page.waitForURL(/\/dashboard\/payroll\/(?!new$)[^/]+$/, { timeout: 60_000 });

      // The run page: its pay period and pay date.
      const details = page.locator('dl.core-details').first();
      const text = await waitFor('the run page with its pay date', () => details.innerText().catch(() => ''), (t) => t.includes('Pay date'), 30_000);
      expect(text).toContain(day(schedule!.next_pay_date));
      expect(text).toContain(`${day(schedule!.next_period.start)} – ${day(schedule!.next_period.end)}`);
      await screenshot(page, FLOW, '/dashboard/payroll/run-pay-date');
      expectNoPageErrors(tab);
    } finally {
      // The demo tenant is shared by the other flows: leave it without a schedule.
      await apiAs(page, `/api/employers/${employerId}`, { method: 'PATCH', body: { pay_schedule: null } });
      await tab.context.close();
    }
  });
});
