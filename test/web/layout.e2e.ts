import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, type Tab, type UserKey } from './support/harness.js';

/**
 * Every dashboard, portal and admin page at a phone's and a desktop's width: the page itself never
 * scrolls sideways (a wide table scrolls inside its own box); plus the shell: titles, company, favicon.
 */
const FLOW = 'layout';
const WIDTHS = [390, 1440] as const;

const DASHBOARD = [
  '/dashboard',
  '/dashboard/team',
  '/dashboard/team/add',
  '/dashboard/team/:employeeId',
  '/dashboard/payroll',
  '/dashboard/payroll/new',
  '/dashboard/payroll/:runId',
  '/dashboard/treasury',
  '/dashboard/treasury/deposit',
  '/dashboard/cards',
  '/dashboard/compliance',
  '/dashboard/api-access',
  '/dashboard/settings',
  '/dashboard/settings/billing',
  '/dashboard/settings/agents',
  '/dashboard/settings/deposit-addresses',
  '/dashboard/demo',
];
const ADMIN_TABS = ['employers', 'payroll_runs', 'escrows', 'jobs', 'email_outbox', 'audit_log'];
const PAGES: Record<Exclude<UserKey, never>, string[]> = {
  owner: DASHBOARD,
  admin: ['/admin', ...ADMIN_TABS.map((tab) => `/admin?tab=${tab}`), '/admin/announcements'],
  employee: ['/portal', '/portal/activity', '/portal/payslips'],
};

let browser: Browser;
const params: Record<string, string> = {};

beforeAll(async () => {
  browser = await launchBrowser();
  const owner = await signedIn(browser, 'owner');
  const { owned_employer_id: employerId } = await sessionOf(owner.page);
  const { employees } = await apiAs<{ employees: { id: string }[] }>(owner.page, `/api/employers/${employerId}/team`);
  params.employeeId = employees[0]!.id;
  const { runs } = await apiAs<{ runs: { id: string }[] }>(owner.page, `/api/employers/${employerId}/payroll/runs?limit=1`);
  params.runId =
    runs[0]?.id ??
    (
      await apiAs<{ payroll_run_id: string }>(owner.page, `/api/employers/${employerId}/payroll`, {
        method: 'POST',
        body: { items: [{ employee_id: params.employeeId, amount_usd: '1.00' }] },
      })
    ).payroll_run_id;
  await owner.context.close();
});
afterAll(async () => {
  await browser?.close();
});

const urlOf = (pattern: string) => pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => params[name]!);

/** How far the page is wider than the window, and the widest elements sticking out (for the message). */
function pageOverflow(page: Page): Promise<{ over: number; culprits: string[] }> {
  return page.evaluate(() => {
    // Runs in the page (the root tsconfig has no DOM types).
    const doc = (globalThis as unknown as { document: { scrollingElement: { scrollWidth: number; clientWidth: number }; querySelectorAll(s: string): ArrayLike<{ getBoundingClientRect(): { right: number }; tagName: string; className: unknown; textContent: string | null }> } }).document;
    const root = doc.scrollingElement;
    const culprits = Array.from(doc.querySelectorAll('main *'))
      .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)} "${(el.textContent ?? '').trim().slice(0, 40)}"`);
    return { over: root.scrollWidth - root.clientWidth, culprits };
  });
}

async function settle(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor({ state: 'visible' });
  await page.locator('.spinner').first().waitFor({ state: 'detached', timeout: 5_000 }).catch(() => undefined);
  await page.waitForLoadState('networkidle', { timeout: 3_000 }).catch(() => undefined);
}

describe('no page scrolls sideways', () => {
  for (const user of Object.keys(PAGES) as UserKey[]) {
    for (const width of WIDTHS) {
      it(`${user}'s pages at ${width} px`, async () => {
        const tab: Tab = await signedIn(browser, user);
        await tab.page.setViewportSize({ width, height: 900 });
        const failures: string[] = [];
        for (const pattern of PAGES[user]) {
          const url = urlOf(pattern);
          await tab.page.goto(url);
          await settle(tab.page);
          await screenshot(tab.page, FLOW, `${width}${pattern.replace('?tab=', '-')}`);
          const { over, culprits } = await pageOverflow(tab.page);
          if (over > 0) failures.push(`${url}: ${over} px too wide (${culprits.join('; ')})`);
        }
        expect(failures).toEqual([]);
        expectNoPageErrors(tab);
        await tab.context.close();
      });
    }
  }
});

describe('the shell', () => {
  it('titles each page with the company, names the company in the header, has a favicon', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const { owned_employer_id: employerId } = await sessionOf(page);
    const { name } = await apiAs<{ name: string }>(page, '/api/employers', { method: 'POST', body: { name: 'unused' } });
    await page.goto('/dashboard/team');
    await settle(page);
    await expect.poll(() => page.title()).toBe(`Team · ${name} · Payroll`);
    await page.goto('/dashboard/treasury');
    await expect.poll(() => page.title()).toBe(`Treasury · ${name} · Payroll`);
    expect(await page.locator('header .company').innerText()).toBe(name);
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    const response = await page.request.get(icon!);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toContain('image/svg+xml');
    expect(employerId).toBeTruthy();
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('sends an employee who opens /dashboard to their portal, with no employer menu', async () => {
    const tab = await signedIn(browser, 'employee');
    const { page } = tab;
    await page.goto('/dashboard/team');
    await page.waitForURL((url) => url.pathname === '/portal');
    await settle(page);
    expect(await page.getByRole('navigation', { name: 'Employer' }).count()).toBe(0);
    expect(await page.getByText('Create your company').count()).toBe(0);
    expect(await page.title()).toBe('Your pay · Payroll');
    expectNoPageErrors(tab);
    await tab.context.close();
  });

  it('shows the outline of the shell while the session loads', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    // Hold the session answer back: the header and menu placeholders show meanwhile, not a bare "Loading".
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/session', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto('/dashboard');
    const skeleton = page.getByRole('status', { name: 'Loading' });
    await skeleton.waitFor({ state: 'visible' });
    expect(await skeleton.locator('.skeleton-nav').count()).toBeGreaterThan(3);
    await screenshot(page, FLOW, 'skeleton');
    release();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ state: 'visible' });
    expectNoPageErrors(tab);
    await tab.context.close();
  });
});
