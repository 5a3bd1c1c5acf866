import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card } from '../support/pay.js';
import { apiAs, baseUrl, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, visibleAlerts, visit, waitFor } from './support/harness.js';

/** Flow: an agent pays the $0.25 off-ramp by card (a $0.50 card credit); the owner sends what is left back to the card from Billing. */
const FLOW = 'card-credit';
const OFFRAMP = '/api/mpp/bridge/offramp';
const ADA = 'ada@demo-payroll.example';

interface Credit {
  id: string;
  status: string;
  remaining_usd: string;
  refunded_usd: string;
  payment_intent: string;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** The owner has Ada's identity check approved (the sandbox approves it a few calls later); returns her employee id. */
async function adaApproved(owner: Page, employerId: string): Promise<string> {
  const team = await apiAs<{ employees: { id: string; email: string }[] }>(owner, `/api/employers/${employerId}/team`);
  const ada = team.employees.find((e) => e.email === ADA)!;
  const kyc = () => apiAs<{ kyc_status: string }>(owner, `/api/employees/${ada.id}/kyc`, { method: 'POST' }).then((k) => k.kyc_status);
  await waitFor('KYC approved', kyc, (status) => status === 'approved', 30_000, 1_000);
  return ada.id;
}

/** Ada's bank account (registering the same one again returns it) and her bearer, from her own tab. */
async function adaBank(employee: Page, adaId: string): Promise<{ bankAccountId: string; token: string }> {
  const registered = await apiAs<{ id: string }>(employee, `/api/employees/${adaId}/bank-accounts`, {
    method: 'POST',
    body: { destinationType: 'ach', accountOwnerName: 'Ada Lovelace', details: { routingNumber: '021000021', accountNumber: '000123456789' } },
  });
  const { bank_accounts: accounts } = await apiAs<{ bank_accounts: { id: string; bank_account_id: string }[] }>(employee, `/api/employees/${adaId}/bank-accounts`);
  const bankAccountId = accounts.find((a) => a.id === registered.id)!.bank_account_id;
  // Runs in the page (the root tsconfig has no DOM types).
  const token = await employee.evaluate(() => (globalThis as unknown as { localStorage: { getItem(key: string): string } }).localStorage.getItem('payroll.token'));
  return { bankAccountId, token };
}

/** A row's cells by their column, as shown. */
async function cellsOf(row: Locator): Promise<Record<string, string>> {
  const cells = await row.locator('td').evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-label') ?? '', td.textContent?.trim() ?? '']));
  return Object.fromEntries(cells);
}

describe('card credit on the billing page', () => {
  it("an agent's card payment of the off-ramp buys a $0.50 credit; the owner refunds the $0.25 left", async () => {
    const owner = await signedIn(browser, 'owner');
    const { owned_employer_id: employerId } = await sessionOf(owner.page);
    const adaId = await adaApproved(owner.page, employerId!);

    const employee = await signedIn(browser, 'employee');
    const { bankAccountId, token } = await adaBank(employee.page, adaId);
    await employee.context.close();

    // From Node, as a third-party agent pays: mppx's stock stripe client against the card sandbox.
    const paid = await card(baseUrl())(OFFRAMP, {
      method: 'POST',
      body: { employeeId: adaId, amount: '1', destinationType: 'ach', bankAccountId },
      headers: { 'X-Identity-Token': token },
    });
    expect(paid.status, await paid.clone().text()).toBe(200);
    const creditId = paid.headers.get('Payment-Credit');
    expect(creditId).toMatch(/^[0-9a-f-]{36}$/);
    expect(paid.headers.get('Payment-Credit-Remaining')).toBe('0.250000');

    // The owner's view of it (earlier runs left credits too: the newest 100 hold this one).
    const creditNow = async () => (await apiAs<{ credits: Credit[] }>(owner.page, `/api/employers/${employerId}/card-credits?limit=100`)).credits.find((c) => c.id === creditId);
    const credit = (await creditNow())!;
    expect(credit).toMatchObject({ status: 'open', remaining_usd: '0.250000', refunded_usd: '0.000000' });

    const { page } = owner;
    await visit(page, FLOW, '/dashboard/settings/billing');
    const section = page.getByRole('region', { name: 'Card credit' });
    // Its row: the one with its card charge.
    const row = section.getByRole('row').filter({ hasText: credit.payment_intent });
    await row.waitFor({ state: 'visible' });
    expect(await cellsOf(row)).toMatchObject({ Status: 'open', 'Top-up': '$0.50', Drawn: '$0.25', Left: '$0.25', Refunded: '$0.00' });

    await row.getByRole('button', { name: 'Refund $0.25', exact: true }).click();
    await section.getByRole('status').filter({ hasText: 'Refunded $0.25 to the card.' }).waitFor({ state: 'visible' });
    const shown = await waitFor('the row to show the refund', () => cellsOf(row), (cells) => cells.Status === 'refunded');
    expect(shown).toMatchObject({ Left: '$0.00', Refunded: '$0.25', Refund: '' });
    expect(await visibleAlerts(page)).toEqual([]);
    expect(await creditNow()).toMatchObject({ status: 'refunded', remaining_usd: '0.000000', refunded_usd: '0.250000' });

    await screenshot(page, FLOW, '/dashboard/settings/billing-card-credit');
    expectNoPageErrors(owner);
    await owner.context.close();
  });
});
