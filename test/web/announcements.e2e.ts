import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { choose, expectNoPageErrors, launchBrowser, screenshot, signedIn, uniqueTag, visibleAlerts, visit, waitFor } from './support/harness.js';

/** Flow 2: the admin publishes an announcement; the employee sees the banner, dismisses it, and it stays gone. */
const FLOW = 'announcements';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('announcements', () => {
  it('admin publishes, the employee dismisses for good', async () => {
    const title = `E2E notice ${uniqueTag()}`;

    const admin = await signedIn(browser, 'admin');
    await visit(admin.page, FLOW, '/admin/announcements');
    await admin.page.getByLabel('Title', { exact: true }).fill(title);
    await admin.page.getByLabel('Body', { exact: true }).fill('A browser test published this announcement for employees.');
    await choose(admin.page, 'Severity', 'warning');
    await choose(admin.page, 'Audience', 'employees');
    const created = admin.page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/admin/announcements');
    await admin.page.getByRole('button', { name: 'Publish now', exact: true }).click();
    expect((await created).status(), 'POST /api/admin/announcements').toBe(201);
    // The admin's list shows it.
    await admin.page.getByTestId('announcement-row').filter({ hasText: title }).first().waitFor({ state: 'visible' });
    expect(await visibleAlerts(admin.page)).toEqual([]);
    await screenshot(admin.page, FLOW, '/admin/announcements-published');
    expectNoPageErrors(admin);
    await admin.context.close();

    // The employee, in a context of their own.
    const employee = await signedIn(browser, 'employee');
    const { page } = employee;
    const banner = page.getByTestId('announcement-banner').filter({ hasText: title });
    await visit(page, FLOW, '/portal');
    await banner.first().waitFor({ state: 'visible' });
    await screenshot(page, FLOW, '/portal-with-banner');

    const dismissed = page.waitForResponse((r) => r.request().method() === 'POST' && /\/api\/announcements\/[^/]+\/dismiss$/.test(new URL(r.url()).pathname));
    await page.getByRole('button', { name: `Dismiss: ${title}`, exact: true }).click();
    expect((await dismissed).status()).toBe(204);
    await banner.first().waitFor({ state: 'hidden' });

    // Reload: the banners are fetched again and this one is not among them.
    const fetched = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/announcements/active');
    await page.reload();
    const active = (await (await fetched).json()) as { announcements: { title: string }[] };
    expect(active.announcements.map((a) => a.title)).not.toContain(title);
    await page.locator('h1').first().waitFor({ state: 'visible' });
    await waitFor('the page to settle after reload', () => page.locator('.spinner').count(), (n) => n === 0, 10_000).catch(() => undefined);
    expect(await banner.count()).toBe(0);
    await screenshot(page, FLOW, '/portal-after-dismiss');
    expectNoPageErrors(employee);
    await employee.context.close();
  });
});
