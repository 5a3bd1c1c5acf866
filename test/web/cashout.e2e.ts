import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devWallets } from '../../src/features/dev/wallets.js';
import { expectNoPageErrors, launchBrowser, screenshot, signedIn, visibleAlerts, visit, waitFor } from './support/harness.js';
import { injectWallet } from './support/wallet.js';

/** Flow: the demo employee cashes out to a bank, sending the deposit from a browser wallet, to `payment_processed`. */
const FLOW = 'cashout';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** The signed-in user's API call from their tab (their bearer is in the page's storage). */
async function callApi<T>(page: Page, method: string, path: string): Promise<T> {
  return page.evaluate(
    async ([m, p]) => {
      const response = await fetch(p!, { method: m, headers: { authorization: `Bearer ${(globalThis as unknown as { localStorage: { getItem(key: string): string } }).localStorage.getItem('payroll.token')}` } });
      if (!response.ok) throw new Error(`${m} ${p}: ${response.status} ${await response.text()}`);
      return response.json();
    },
    [method, path],
  ) as Promise<T>;
}

describe('cash-out from the portal', () => {
  it('the employee registers a bank, cashes out and sends the deposit from their browser wallet; the transfer completes', async () => {
    // The employer starts the identity check (the sandbox approves it two steps later).
    const owner = await signedIn(browser, 'owner');
    const { owned_employer_id: employerId } = await callApi<{ owned_employer_id: string }>(owner.page, 'GET', '/api/session');
    const team = await callApi<{ employees: { id: string; email: string; wallet_address: string }[] }>(owner.page, 'GET', `/api/employers/${employerId}/team`);
    const ada = team.employees.find((e) => e.email === 'ada@demo-payroll.example')!;
    // The demo employee is paid to the second development wallet: the key the injected wallet holds.
    const key = devWallets()[1]!;
    expect(ada.wallet_address.toLowerCase()).toBe(key.address.toLowerCase());
    const kyc = () => callApi<{ kyc_status: string }>(owner.page, 'POST', `/api/employees/${ada.id}/kyc`).then((k) => k.kyc_status);
    await waitFor('KYC approved', kyc, (status) => status === 'approved', 30_000, 1_000);
    await owner.context.close();

    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    await injectWallet(page, key.privateKey);
    await visit(page, FLOW, '/portal');

    // Another flow may have registered this account already (card-credit.e2e.ts does): adding it
    // again answers with the same account.
    const holderName = page.getByLabel('Account holder name');
    const addAnother = page.getByRole('button', { name: 'Add another bank account' });
    await holderName.or(addAnother).first().waitFor();
    if (await addAnother.isVisible()) await addAnother.click();
    await holderName.fill('Ada Lovelace');
    await page.getByLabel('Routing number').fill('021000021');
    await page.getByLabel('Account number').fill('000123456789');
    await page.getByRole('button', { name: 'Add bank account' }).click();
    await page.getByLabel('Amount (USD)').fill('12.50');
    await page.getByRole('button', { name: 'Cash out' }).click();

    const send = page.getByRole('button', { name: 'Send $12.50 with my browser wallet' });
    await send.waitFor({ state: 'visible', timeout: 20_000 });
    await screenshot(page, FLOW, '/portal-cashout-awaiting');
    await send.click();

    // The deposit lands, the sandbox sees it and pays the bank (a page refusal would be in the failure message).
    const latest = async () => {
      const { transfers } = await callApi<{ transfers: { amount: string; status: string }[] }>(page, 'GET', `/api/employees/${ada.id}/offramps`);
      return { ...transfers[0]!, alerts: await visibleAlerts(page) };
    };
    const final = await waitFor('the cash-out to complete', latest, (t) => t.status === 'payment_processed', 60_000, 1_000);
    expect(final.amount).toBe('12.500000');
    await page.reload();
    await page.getByRole('heading', { name: 'Recent cash-outs' }).waitFor();
    await waitFor('the portal to show it processed', () => page.locator('table').last().innerText(), (text) => /processed/i.test(text), 20_000);
    await screenshot(page, FLOW, '/portal-cashout-completed');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('with no browser wallet, local mode sends the deposit from the development wallet in one click', async () => {
    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    await visit(page, FLOW, '/portal');
    const { employee_ids: [adaId] } = await callApi<{ employee_ids: string[] }>(page, 'GET', '/api/session');
    await page.getByLabel('Amount (USD)').fill('5');
    await page.getByRole('button', { name: 'Cash out' }).click();
    const development = page.getByRole('button', { name: 'Send $5.00 with the development wallet' });
    await development.waitFor({ state: 'visible' });
    expect(await page.getByRole('button', { name: /with my browser wallet/ }).count()).toBe(0);
    await development.click();
    const latest = async () => {
      const { transfers } = await callApi<{ transfers: { amount: string; status: string }[] }>(page, 'GET', `/api/employees/${adaId}/offramps`);
      return { ...transfers[0]!, alerts: await visibleAlerts(page) };
    };
    const moved = await waitFor('the deposit to arrive', latest, (t) => t.status !== 'awaiting_funds', 30_000, 1_000);
    expect(moved.amount).toBe('5.000000');
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
