import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, choose, expectNoPageErrors, launchBrowser, newTab, screenshot, sessionOf, signedIn, visibleAlerts, visit } from './support/harness.js';

/** Forms check every field before sending and say each problem in plain words; the server's refusals read the same. */
const FLOW = 'forms';

let browser: Browser;

/** Every request the page sends with `method` to a path matching `path`: a form refused before sending sends none. */
function sentRequests(page: Page, method: string, path: RegExp): string[] {
  const sent: string[] = [];
  page.on('request', (request) => {
    if (request.method() === method && path.test(new URL(request.url()).pathname)) sent.push(request.url());
  });
  return sent;
}

const sorted = (texts: string[]) => [...texts].sort();
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

  it("renaming the company, a pay schedule and editing a salary refuse bad input in plain words", async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    await visit(page, FLOW, '/dashboard/settings');
    await page.getByLabel('Employer name').fill('   ');
    await page.getByRole('button', { name: 'Rename' }).click();
    expect(await visibleAlerts(page)).toContain('Employer name is required');

    const employerPath = `/api/employers/${(await sessionOf(page)).owned_employer_id}`;
    const scheduleBefore = (await apiAs<{ pay_schedule: unknown }>(page, employerPath)).pay_schedule;
    await choose(page, 'How often', 'monthly');
    await page.getByLabel(/^Pay day/).fill('40');
    await page.getByRole('button', { name: 'Save pay schedule' }).click();
    expect(await visibleAlerts(page)).toContain('Pay day must be at most 31');
    await choose(page, 'How often', 'weekly');
    await page.getByRole('button', { name: 'Save pay schedule' }).click();
    expect(await visibleAlerts(page)).toContain('First pay date is required');
    expect((await apiAs<{ pay_schedule: unknown }>(page, employerPath)).pay_schedule).toEqual(scheduleBefore);

    await visit(page, FLOW, '/dashboard/team');
    await page.getByRole('link', { name: 'Grace Hopper' }).click();
    await page.getByLabel('Annual salary (USD)').fill('-5');
    await page.getByRole('button', { name: 'Save salary' }).click();
    expect(await visibleAlerts(page)).toContain('Salary must be a positive amount, e.g. 1250.50');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('the portal: a bank account names every bad field at once (with the checksums), the cash-out amount in the same words', async () => {
    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    // One registered account, so the cash-out form shows whatever ran before; nothing here reaches the bank.
    await page.route('**/api/employees/*/bank-accounts', (route) =>
      route.request().method() === 'GET'
        ? route.fulfill({
            json: {
              employee_id: '00000000-0000-4000-8000-000000000000',
              bank_accounts: [{ id: '00000000-0000-4000-8000-000000000001', bank_account_id: 'ea_forms', destination_type: 'ach', last4: '6789', label: null, created_at: new Date().toISOString() }],
            },
          })
        : route.fallback(),
    );
    const bankPosts = sentRequests(page, 'POST', /\/bank-accounts$/);
    const cashOuts = sentRequests(page, 'POST', /\/offramp$/);
    await visit(page, FLOW, '/portal');
    await page.getByRole('button', { name: 'Add another bank account' }).click();
    await page.getByLabel('Routing number').fill('123456789');
    await page.getByLabel('Account number').fill('12');
    await page.getByLabel('Nickname (optional)').fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Add bank account' }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(
      sorted(['Account holder name is required', 'Routing number is not a valid ABA routing number', 'Account number must be 4-17 digits', 'Nickname must be at most 100 characters']),
    );
    await screenshot(page, FLOW, '/portal-bank-account-refused');

    await page.getByLabel('Account type').selectOption('sepa');
    await page.getByLabel('Account holder name').fill('Ada');
    await page.getByLabel('IBAN').fill('DE89 3704 0044 0532 0130 02');
    await page.getByLabel('Nickname (optional)').fill('');
    await page.getByRole('button', { name: 'Add bank account' }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(sorted(['Account holder name must hold a first and a last name for a SEPA account', 'IBAN fails the IBAN checksum']));

    await page.getByLabel('Amount (USD)').fill('0');
    await page.getByRole('button', { name: 'Cash out' }).click();
    expect(await visibleAlerts(page)).toContain('Amount must be more than 0');
    await page.getByLabel('Amount (USD)').fill('-5');
    await page.getByRole('button', { name: 'Cash out' }).click();
    expect(await visibleAlerts(page)).toContain('Amount must be a positive amount, e.g. 1250.50');
    expect(bankPosts).toEqual([]);
    expect(cashOuts).toEqual([]);
    await screenshot(page, FLOW, '/portal-cashout-refused');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it("authorizing an agent: every limit's problem at once, in the server's words", async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const creates = sentRequests(page, 'POST', /\/agents\/authorizations$/);
    await visit(page, FLOW, '/dashboard/settings/agents');
    await page.getByLabel('Agent identifier').fill('has spaces');
    await page.getByLabel('Per-transaction cap (USD)').fill('0');
    await page.getByLabel('Per-day cap (USD)').fill('lots');
    await page.getByLabel('Payments per minute').fill('0');
    await page.getByLabel('Allowed recipients').fill('nope');
    await page.getByRole('button', { name: 'Authorize agent' }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(
      sorted([
        'Agent identifier must be 1-200 printable ASCII characters without spaces',
        'Label is required',
        'Per-transaction cap must be more than 0',
        'Per-day cap must be an amount in dollars with at most 6 decimal places, e.g. 1250.50',
        'Payments per minute must be at least 1',
        'Allowed recipients must be an EVM address (0x...) or a base58 Solana address',
      ]),
    );
    await page.getByLabel('Per-transaction cap (USD)').fill('50');
    await page.getByLabel('Per-day cap (USD)').fill('$20');
    await page.getByRole('button', { name: 'Authorize agent' }).click();
    expect(await visibleAlerts(page)).toContain('Per-day cap must be at least the per-transaction cap');
    expect(creates).toEqual([]);
    await screenshot(page, FLOW, '/agents-refused');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('a new announcement: every bad field at once, nothing saved', async () => {
    const tab = await signedIn(browser, 'admin');
    const { page } = tab;
    const saves = sentRequests(page, 'POST', /\/api\/admin\/announcements$/);
    await visit(page, FLOW, '/admin/announcements');
    await page.getByLabel('Title', { exact: true }).fill('x'.repeat(121));
    await page.getByLabel('Link URL', { exact: true }).fill('http://example.com');
    await page.getByRole('button', { name: 'Publish now', exact: true }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(
      sorted([
        'Title must be 1-120 characters (after trimming)',
        'Body must be 1-600 characters (after trimming)',
        'Link URL must be an https URL or a relative path starting with a single "/" (at most 2048 characters)',
        'Link label is required with a link URL',
      ]),
    );
    expect(saves).toEqual([]);
    await screenshot(page, FLOW, '/announcement-refused');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it("compliance: blocking a wallet names both bad fields at once; an explanation offers links into the app and never an API route", async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const blocks = sentRequests(page, 'POST', /\/blocklist$/);
    await visit(page, FLOW, '/dashboard/compliance');
    // What every check screens against: the OFAC snapshot the service started with.
    await expect.poll(() => page.getByTestId('sanctions-list').textContent()).toMatch(/OFAC's SDN list of 2024-09-27: 156 wallet addresses/);
    await page.getByLabel('Wallet address').fill('0x12');
    await page.getByLabel('Reason (optional)').fill('x'.repeat(501));
    await page.getByRole('button', { name: 'Block wallet' }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(sorted(['Wallet address must be a 0x-prefixed 20-byte hex address', 'Reason must be at most 500 characters']));
    expect(blocks).toEqual([]);

    // Block Grace's wallet through the form, ask why she is blocked, then unblock her again.
    const { owned_employer_id: employerId } = await apiAs<{ owned_employer_id: string }>(page, '/api/session');
    const { employees } = await apiAs<{ employees: { full_name: string; wallet_address: string | null }[] }>(page, `/api/employers/${employerId}/compliance`);
    const wallet = employees.find((e) => e.full_name === 'Grace Hopper')!.wallet_address!;
    try {
      await page.getByLabel('Wallet address').fill(wallet);
      await page.getByLabel('Reason (optional)').fill('Forms browser test');
      await page.getByRole('button', { name: 'Block wallet' }).click();
      await page.getByText(`Blocked ${wallet.toLowerCase()}.`).waitFor({ state: 'visible' });
      await page.getByRole('button', { name: "Explain Grace Hopper's compliance status" }).click();
      const panel = page.getByRole('region', { name: 'Explanation for Grace Hopper' });
      const review = panel.getByRole('button', { name: 'Review your blocklist' });
      await review.waitFor({ state: 'visible' });
      expect(await panel.innerText()).not.toContain('/api/');
      await screenshot(page, FLOW, '/compliance-explanation-actions');
      await review.click();
      expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id)).toBe('blocked-heading');
    } finally {
      const { entries } = await apiAs<{ entries: { id: string; wallet_address: string }[] }>(page, `/api/employers/${employerId}/blocklist`);
      for (const entry of entries.filter((e) => e.wallet_address === wallet.toLowerCase())) {
        await apiAs(page, `/api/employers/${employerId}/blocklist/${entry.id}`, { method: 'DELETE' });
      }
    }
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('signing in: an empty user id or token is named, not a silently disabled button', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    const tokens = sentRequests(page, 'POST', /\/api\/dev\/token$/);
    await visit(page, FLOW, '/signin');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    expect(sorted(await visibleAlerts(page))).toEqual(sorted(['User id is required', 'Token is required']));
    expect(tokens).toEqual([]);
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
