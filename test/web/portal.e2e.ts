import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoPageErrors, launchBrowser, screenshot, signedIn, visit, waitFor } from './support/harness.js';

/** Flow 3: the demo employee's accruing balance ticks on /portal. */
const FLOW = 'portal';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function amountOf(text: string): number {
  return Number(text.replace(/[^0-9.]/g, ''));
}

describe('employee portal', () => {
  it('shows a balance that accrues while you watch', async () => {
    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    await visit(page, FLOW, '/portal');
    const balance = page.getByTestId('accruing-balance');
    await balance.waitFor({ state: 'visible' });
    const first = await waitFor('a balance with digits', () => balance.innerText(), (t) => /\d/.test(t));
    const later = await waitFor('the balance to change', () => balance.innerText(), (t) => t !== first, 5_000);
    expect(amountOf(later), `"${first}" -> "${later}"`).toBeGreaterThan(amountOf(first));
    await screenshot(page, FLOW, '/portal-accrued');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('claims an advance with one click: the portal confirms the amount and the activity lists it', async () => {
    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    await visit(page, FLOW, '/portal');
    const available = page.getByTestId('advance-available');
    await waitFor('something accrued to claim', () => available.innerText(), (t) => amountOf(t) > 0);
    await page.getByRole('button', { name: 'Claim it to my wallet' }).click();
    const claimed = page.getByTestId('advance-claimed');
    await claimed.waitFor({ state: 'visible', timeout: 30_000 });
    expect(await claimed.innerText()).toMatch(/Claimed \$\d/);
    await screenshot(page, FLOW, '/portal-advance-claimed');
    await visit(page, FLOW, '/portal/activity');
    await page.getByText('Advance', { exact: true }).first().waitFor({ state: 'visible' });
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
