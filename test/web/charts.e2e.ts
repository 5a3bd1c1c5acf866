import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, waitFor, type Tab } from './support/harness.js';

/**
 * Charts (issue 29): the overview's runway and payroll-cost charts and the treasury's balance
 * history, with axis titles, a tooltip on hover and on keyboard focus, a text alternative, and no
 * sideways scrolling at a phone's width.
 */
const FLOW = 'charts';
const WIDTHS = [390, 1440] as const;
const DEMO_EMPLOYEE = 'ada@demo-payroll.example';
/** A dollar amount as the pages show it: 2 decimals. */
const AMOUNT = /\$[\d,]+\.\d{2}\b/;

let browser: Browser;
let tab: Tab;
let employerId: string;

/** The owner has the agent wallet pay the demo employee, so this month has a payroll cost. */
async function payDemoEmployee(page: Page): Promise<void> {
  const { employees } = await apiAs<{ employees: { id: string; email: string }[] }>(page, `/api/employers/${employerId}/team?limit=500`);
  const employeeId = employees.find((e) => e.email === DEMO_EMPLOYEE)!.id;
  const { decision_id } = await apiAs<{ decision_id: string }>(page, `/api/employers/${employerId}/payroll/decisions`, {
    method: 'POST',
    body: { items: [{ employee_id: employeeId, amount_usd: '321.45', chain: 'tempo' }] },
  });
  const { payroll_run_id: runId } = await apiAs<{ payroll_run_id: string }>(page, '/api/x402/payroll/execute', { method: 'POST', body: { employer_id: employerId, decision_id } });
  await waitFor(
    'the run to be confirmed',
    () => apiAs<{ runs: { id: string; status: string }[] }>(page, `/api/employers/${employerId}/payroll/runs?limit=20`),
    (body) => body.runs.some((r) => r.id === runId && r.status === 'confirmed'),
    60_000,
  );
}

/** The page is no wider than the window. */
function overflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { scrollingElement: { scrollWidth: number; clientWidth: number } } }).document.scrollingElement;
    return root.scrollWidth - root.clientWidth;
  });
}

/** The chart's drawing surface (recharts' SVG, focusable through its accessibility layer). */
const surface = (card: Locator) => card.locator('svg.recharts-surface').first();
const tooltip = (card: Locator) => card.getByTestId('chart-tooltip');

/** Hovers the plot near its right edge: the latest point's tooltip. */
async function hoverLatest(card: Locator): Promise<void> {
  const box = (await card.locator('.recharts-cartesian-grid').first().boundingBox())!;
  await card.page().mouse.move(box.x + box.width - 4, box.y + box.height / 2);
}

/** The data table behind "Show the data": its last row's cells. */
async function lastDataRow(card: Locator): Promise<string[]> {
  await card.getByText('Show the data').click();
  const cells = card.locator('details tbody tr').last().locator('th, td');
  return cells.allInnerTexts();
}

async function chartCard(page: Page, name: string): Promise<Locator> {
  const card = page.getByRole('region', { name });
  await surface(card).waitFor({ state: 'visible', timeout: 30_000 });
  return card;
}

beforeAll(async () => {
  browser = await launchBrowser();
  tab = await signedIn(browser, 'owner');
  employerId = (await sessionOf(tab.page)).owned_employer_id!;
  await payDemoEmployee(tab.page);
});
afterAll(async () => {
  await tab?.context.close();
  await browser?.close();
});

describe('charts', () => {
  it('the overview: payroll cost by month with axis titles, a tooltip on hover and on keyboard focus', async () => {
    const { page } = tab;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/dashboard');
    const card = await chartCard(page, 'Payroll cost by month');
    expect(await card.locator('.core-axis-title').allTextContents()).toEqual(expect.arrayContaining(['Month (UTC)', 'Paid']));
    expect(await card.locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').first().textContent()).toMatch(AMOUNT);
    // The text alternative: a caption with the total, and the data as a table.
    expect(await card.locator('figcaption').innerText()).toMatch(/paid by \d+ payroll runs? in the last 12 months/);

    const { months } = await apiAs<{ months: { month: string; paid_usd: string }[] }>(page, `/api/employers/${employerId}/payroll/cost-history?months=12`);
    const [, amount] = await lastDataRow(card);
    expect(Number(amount!.replace(/[$,]/g, ''))).toBeCloseTo(Number(months.at(-1)!.paid_usd), 2);
    expect(Number(amount!.replace(/[$,]/g, ''))).toBeGreaterThanOrEqual(321.45);

    await hoverLatest(card);
    await expect.poll(() => tooltip(card).innerText()).toContain(`Paid: ${amount}`);
    await screenshot(page, FLOW, '1440/dashboard-cost-tooltip');

    // Keyboard: Tab to the chart shows the first month's tooltip; the arrow keys move it.
    await page.mouse.move(0, 0);
    await surface(card).focus();
    await expect.poll(() => tooltip(card).innerText()).toMatch(/Paid: \$[\d,]+\.\d{2}/);
    const first = await tooltip(card).innerText();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => tooltip(card).innerText()).not.toBe(first);
    expectNoPageErrors(tab);
  });

  it('the overview: the runway has months on x, dollars on y and a tooltip per bar', async () => {
    const { page } = tab;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/dashboard');
    const card = await chartCard(page, 'Runway');
    expect(await card.locator('.core-axis-title').allTextContents()).toEqual(expect.arrayContaining(['Months from now', 'Balance left']));
    const ticks = await card.locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').allTextContents();
    expect(ticks.length).toBeGreaterThan(2);
    for (const tick of ticks) expect(tick).toMatch(AMOUNT);
    expect(await card.locator('.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value').first().textContent()).toBe('1');

    await surface(card).focus();
    await expect.poll(() => tooltip(card).innerText()).toMatch(/^After month 1\s+Balance left: \$[\d,]+\.\d{2}/);
    await page.keyboard.press('Tab');
    await hoverLatest(card);
    await expect.poll(() => tooltip(card).innerText()).toMatch(/^After month 12\s+Balance left: \$[\d,]+\.\d{2}/);
    expect(await card.locator('figcaption').innerText()).toMatch(/balance left after each of the next 12 months/);
    expectNoPageErrors(tab);
  });

  it("the treasury: the balance history says when observation began and shows the day's balance on hover and focus", async () => {
    const { page } = tab;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/dashboard/treasury');
    const card = await chartCard(page, 'Balance history');
    expect(await card.locator('.core-axis-title').allTextContents()).toEqual(expect.arrayContaining(['Day (UTC)', 'Total balance']));
    expect(await card.locator('figcaption').innerText()).toMatch(/first read this treasury on [A-Z][a-z]{2} \d{1,2}, \d{4}: there is no record before that/);

    const [day, amount] = await lastDataRow(card);
    expect(amount).toMatch(AMOUNT);
    await hoverLatest(card);
    await expect.poll(() => tooltip(card).innerText()).toContain(day!);
    expect(await tooltip(card).innerText()).toContain(`Total balance: ${amount}`);
    await screenshot(page, FLOW, '1440/treasury-history-tooltip');

    await page.mouse.move(0, 0);
    await surface(card).focus();
    await expect.poll(() => tooltip(card).innerText()).toMatch(/Total balance: \$[\d,]+\.\d{2}/);
    expectNoPageErrors(tab);
  });

  for (const width of WIDTHS) {
    it(`fits at ${width} px: no sideways scrolling on the overview and the treasury`, async () => {
      const { page } = tab;
      await page.setViewportSize({ width, height: 900 });
      for (const [route, chart] of [
        ['/dashboard', 'Payroll cost by month'],
        ['/dashboard/treasury', 'Balance history'],
      ] as const) {
        await page.goto(route);
        const card = await chartCard(page, chart);
        expect((await surface(card).boundingBox())!.width).toBeGreaterThan(200);
        await screenshot(page, FLOW, `${width}${route}`);
        expect(await overflow(page), `${route} at ${width} px`).toBe(0);
      }
      expectNoPageErrors(tab);
    });
  }
});
