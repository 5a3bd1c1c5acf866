import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../web/src/pages/dashboard/components/csv.js';
import { apiAs, expectNoPageErrors, freshEvmAddress, launchBrowser, screenshot, sessionOf, signedIn, uniqueTag } from './support/harness.js';

/** The team table: search, sort by a column and export what is shown as CSV. */
const FLOW = 'tables';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function names(page: Page): Promise<string[]> {
  return (await page.getByRole('region', { name: /employees?$/ }).locator('tbody tr td:first-child').allInnerTexts()).map((t) => t.trim());
}

describe('team table', () => {
  it('searches, sorts and exports the team', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const { owned_employer_id: employerId } = await sessionOf(page);
    // Three employees only this run has, one named like a spreadsheet formula with a quote and a comma.
    const tag = uniqueTag();
    const people = [
      { full_name: `=HYPERLINK("x"), Tables ${tag}`, annual_salary_usd: '2000' },
      { full_name: `Bravo Tables ${tag}`, annual_salary_usd: '30000' },
      { full_name: `Alpha Tables ${tag}`, annual_salary_usd: '100000' },
    ].map((p, n) => ({ ...p, email: `tables-${tag}-${n}@example.com`, wallet_address: freshEvmAddress() }));
    const ids: string[] = [];
    try {
      for (const person of people) ids.push((await apiAs<{ id: string }>(page, `/api/employers/${employerId}/team`, { method: 'POST', body: person })).id);
      await page.goto('/dashboard/team');
      await page.getByRole('searchbox', { name: 'Search the team' }).fill(tag.toUpperCase());
      await expect.poll(() => names(page)).toEqual(people.map((p) => p.full_name));
      await page.getByText('3 of ').waitFor({ state: 'visible' });

      const salary = page.getByRole('columnheader', { name: /Annual salary/ });
      await salary.getByRole('button').click();
      expect(await salary.getAttribute('aria-sort')).toBe('ascending');
      await expect.poll(() => names(page)).toEqual([people[0]!.full_name, people[1]!.full_name, people[2]!.full_name]);
      await salary.getByRole('button').click();
      expect(await salary.getAttribute('aria-sort')).toBe('descending');
      await expect.poll(() => names(page)).toEqual([people[2]!.full_name, people[1]!.full_name, people[0]!.full_name]);
      const name = page.getByRole('columnheader', { name: /Name/ });
      await name.getByRole('button').click();
      expect(await name.getAttribute('aria-sort')).toBe('ascending');
      expect(await salary.getAttribute('aria-sort')).toBeNull();
      await expect.poll(() => names(page)).toEqual([people[0]!.full_name, people[2]!.full_name, people[1]!.full_name]);
      await screenshot(page, FLOW, '/dashboard/team-searched-sorted');

      // At a phone's width each cell stays on one line (the table scrolls in its card), not one character a line.
      await page.setViewportSize({ width: 390, height: 844 });
      const heights = await page.getByRole('region', { name: /employees?$/ }).locator('tbody td').evaluateAll((cells) => cells.map((cell) => (cell as unknown as { clientHeight: number }).clientHeight));
      expect(Math.max(...heights)).toBeLessThan(60);
      await screenshot(page, FLOW, '/dashboard/team-390');

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      expect(download.suggestedFilename()).toMatch(/^team-\d{4}-\d{2}-\d{2}\.csv$/);
      const csv = readFileSync((await download.path())!, 'utf8');
      expect(csv.split('\r\n')[1]).toBe(`"'=HYPERLINK(""x""), Tables ${tag}",${people[0]!.email},${people[0]!.wallet_address},2000.000000,active`);
      expect(parseCsv(csv)).toEqual([
        ['Name', 'Email', 'Wallet', 'Annual salary', 'Status'],
        ...[people[0]!, people[2]!, people[1]!].map((p) => [p.full_name.startsWith('=') ? `'${p.full_name}` : p.full_name, p.email, p.wallet_address, `${p.annual_salary_usd}.000000`, 'active']),
      ]);
      expectNoPageErrors(tab);
    } finally {
      // Leave the demo team as it was for the other flows (payroll pays the whole active team).
      for (const id of ids) await apiAs(page, `/api/employers/${employerId}/team/${id}`, { method: 'PATCH', body: { remove: true } });
      await tab.context.close();
    }
  });
});
