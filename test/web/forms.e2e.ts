import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoPageErrors, launchBrowser, screenshot, signedIn, visibleAlerts, visit } from './support/harness.js';

/** Forms check every field before sending and say each problem in plain words; the server's refusals read the same. */
const FLOW = 'forms';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('forms', () => {
  it('adding an employee: every bad field is named at once, before anything is sent', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/team')) posts.push(request.url());
    });
    await visit(page, FLOW, '/dashboard/team/add');
    await page.getByLabel('Full name', { exact: true }).fill('x'.repeat(201));
    await page.getByLabel('Email', { exact: true }).fill('nope');
    await page.getByLabel('Wallet address', { exact: true }).fill('0x12');
    await page.getByLabel('Annual salary (USD)', { exact: true }).fill('-5000');
    await page.getByRole('button', { name: 'Add employee', exact: true }).click();
    expect((await visibleAlerts(page)).sort()).toEqual(
      [
        'Email must be an email address',
        'Full name must be at most 200 characters',
        'Salary must be a positive amount, e.g. 1250.50',
        'Wallet address must be a 0x-prefixed 20-byte hex address',
      ].sort(),
    );
    expect(posts).toEqual([]);
    await screenshot(page, FLOW, '/team-add-refused');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it("a rule only the server checks comes back beside its field in the same words", async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    await visit(page, FLOW, '/dashboard/team/add');
    await page.getByLabel('Full name', { exact: true }).fill('Ada\u0007Bell');
    await page.getByLabel('Email', { exact: true }).fill(`bell-${Date.now()}@forms.example`);
    await page.getByRole('button', { name: 'Add employee', exact: true }).click();
    await page.getByText('Full name must not contain control characters').waitFor({ state: 'visible' });
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it("renaming the company and editing a salary refuse bad input in plain words", async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    await visit(page, FLOW, '/dashboard/settings');
    await page.getByLabel('Employer name').fill('   ');
    await page.getByRole('button', { name: 'Rename' }).click();
    expect(await visibleAlerts(page)).toContain('Employer name is required');

    await visit(page, FLOW, '/dashboard/team');
    await page.getByRole('link', { name: 'Grace Hopper' }).click();
    await page.getByLabel('Annual salary (USD)').fill('-5');
    await page.getByRole('button', { name: 'Save salary' }).click();
    expect(await visibleAlerts(page)).toContain('Salary must be a positive amount, e.g. 1250.50');
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
