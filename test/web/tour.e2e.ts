import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, expectNoPageErrors, launchBrowser, RESULTS_DIR, sessionOf, signedIn, visibleAlerts, waitFor } from './support/harness.js';

/**
 * The README's tour (docs/tour.md): the demo owner sets a pay schedule and pays the team, then the pages a new user sees
 * first, each checked and captured at a laptop's size. `npm run tour` also copies the pictures into
 * docs/tour/ (TOUR_DIR); CI keeps them with the other screenshots under test-results/web/tour.
 */
const TOUR = path.join(RESULTS_DIR, 'tour');
const VIEWPORT = { width: 1280, height: 860 };

interface TeamMember {
  id: string;
  full_name: string;
}
interface Expected {
  pay_date: string;
  period: { start: string; end: string };
  employees: { employee_id: string; expected_usd: string; payable: boolean }[];
}

/** An employer answer's schedule as the PATCH body takes it (the kind and its own anchor), or null. */
function scheduleInput(schedule: { frequency: string; pay_day: number | null; anchor_date: string | null } | null) {
  if (!schedule) return null;
  if (schedule.frequency === 'monthly') return { frequency: 'monthly', pay_day: schedule.pay_day };
  if (schedule.frequency === 'semi_monthly') return { frequency: 'semi_monthly' };
  return { frequency: schedule.frequency, anchor_date: schedule.anchor_date };
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** A viewport-sized picture (not the full page: the tour shows what a person sees first). */
async function capture(page: Page, name: string): Promise<void> {
  await page.locator('.spinner').first().waitFor({ state: 'detached', timeout: 5_000 }).catch(() => undefined);
  await page.waitForLoadState('networkidle', { timeout: 3_000 }).catch(() => undefined);
  mkdirSync(TOUR, { recursive: true });
  const file = path.join(TOUR, `${name}.jpg`);
  await page.screenshot({ path: file, type: 'jpeg', quality: 80 });
  const docs = process.env.TOUR_DIR?.trim();
  if (docs) {
    mkdirSync(docs, { recursive: true });
    copyFileSync(file, path.join(docs, `${name}.jpg`));
  }
}

/**
 * The owner pays at month end (a monthly schedule on the 31st), then the agent wallet pays every
 * payable employee the server's expected pay for the scheduled period, as the wizard would.
 */
async function payTheTeam(page: Page, employerId: string): Promise<{ runId: string; paid: TeamMember[] }> {
  await apiAs(page, `/api/employers/${employerId}`, { method: 'PATCH', body: { pay_schedule: { frequency: 'monthly', pay_day: 31 } } });
  const expected = await apiAs<Expected>(page, `/api/employers/${employerId}/payroll/expected`);
  const { employees } = await apiAs<{ employees: TeamMember[] }>(page, `/api/employers/${employerId}/team?limit=500`);
  const payable = expected.employees.filter((e) => e.payable);
  const paid = employees.filter((e) => payable.some((p) => p.employee_id === e.id));
  const { decision_id } = await apiAs<{ decision_id: string }>(page, `/api/employers/${employerId}/payroll/decisions`, {
    method: 'POST',
    body: {
      items: payable.map((e) => ({ employee_id: e.employee_id, amount_usd: e.expected_usd, chain: 'tempo' })),
      pay_period_start: expected.period.start,
      pay_period_end: expected.period.end,
      pay_date: expected.pay_date,
    },
  });
  const { payroll_run_id: runId } = await apiAs<{ payroll_run_id: string }>(page, '/api/x402/payroll/execute', {
    method: 'POST',
    body: { employer_id: employerId, decision_id },
  });
  await waitFor(
    'the run to be confirmed',
    () => apiAs<{ runs: { id: string; status: string }[] }>(page, `/api/employers/${employerId}/payroll/runs?limit=20`),
    (body) => body.runs.find((r) => r.id === runId)?.status === 'confirmed',
    60_000,
  );
  return { runId, paid };
}

describe('tour', () => {
  it('the owner pays the team and sees it on the overview and the run page; the employee sees pay, advance, cash-out and the payslip', async () => {
    const owner = await signedIn(browser, 'owner');
    const page = owner.page;
    await page.setViewportSize(VIEWPORT);
    const { owned_employer_id: employerId } = await sessionOf(page);
    // The flows share the demo employer: its schedule is put back as it was at the end.
    const { pay_schedule: scheduleBefore } = await apiAs<{ pay_schedule: { frequency: string; pay_day: number | null; anchor_date: string | null } | null }>(page, `/api/employers/${employerId}`);
    const { runId, paid } = await payTheTeam(page, employerId!);
    expect(paid.length).toBeGreaterThan(0);

    await page.goto('/dashboard');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Runway' }).waitFor();
    await page.getByTestId('next-pay-date').waitFor();
    await page.getByRole('heading', { name: 'Payroll cost by month' }).waitFor();
    await capture(page, '1-overview');

    await page.goto(`/dashboard/payroll/${runId}`);
    const slips = page.getByRole('region', { name: 'Payslips, one per employee' });
    await slips.getByRole('row').filter({ hasText: paid[0]!.full_name }).waitFor();
    for (const member of paid) expect(await slips.innerText()).toContain(member.full_name);
    await capture(page, '2-payroll-run');
    expect(await visibleAlerts(page)).toEqual([]);
    expectNoPageErrors(owner);
    await apiAs(page, `/api/employers/${employerId}`, { method: 'PATCH', body: { pay_schedule: scheduleInput(scheduleBefore) } });
    await owner.context.close();

    const employee = await signedIn(browser, 'employee');
    const portal = employee.page;
    await portal.setViewportSize(VIEWPORT);
    await portal.goto('/portal');
    await portal.getByRole('heading', { name: 'Your pay', level: 1 }).waitFor();
    await portal.getByRole('button', { name: /Claim/ }).first().waitFor();
    await capture(portal, '3-employee-portal');

    await portal.goto(`/portal/payslips/${runId}`);
    await expect.poll(() => portal.getByTestId('payslip-net').innerText()).toMatch(/^\$[\d,]+\.\d{2}$/);
    await capture(portal, '4-payslip');
    expect(await visibleAlerts(portal)).toEqual([]);
    expectNoPageErrors(employee);
    await employee.context.close();
  });
});
