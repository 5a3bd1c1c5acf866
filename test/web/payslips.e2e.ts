import { readFileSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayUsd } from '../../src/money.js';
import { pdfText } from '../support/pdf.js';
import { apiAs, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, visibleAlerts, visit, waitFor } from './support/harness.js';

/** Payslips (issue 29): the owner pays the demo employee, then both open and download the payslip. */
const FLOW = 'payslips';
const DEMO_EMPLOYEE = 'ada@demo-payroll.example';

interface Payslip {
  run_id: string;
  employee_id: string;
  status: string;
  net_amount: string;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Clicks a "Download PDF" button and returns the text of the PDF the browser saved. */
async function downloadedPdf(page: Page, button: Locator): Promise<{ name: string; text: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const bytes = readFileSync(await download.path());
  return { name: download.suggestedFilename(), text: await pdfText(new Uint8Array(bytes)), bytes };
}

/** The owner has the agent wallet pay $1,234.56 to the demo employee from the demo treasury, as the wizard does. */
async function payDemoEmployee(page: Page, employerId: string): Promise<{ runId: string; employeeId: string }> {
  const { employees } = await apiAs<{ employees: { id: string; email: string }[] }>(page, `/api/employers/${employerId}/team?limit=500`);
  const employeeId = employees.find((e) => e.email === DEMO_EMPLOYEE)!.id;
  const { decision_id } = await apiAs<{ decision_id: string }>(page, `/api/employers/${employerId}/payroll/decisions`, {
    method: 'POST',
    body: { items: [{ employee_id: employeeId, amount_usd: '1234.56', chain: 'tempo' }] },
  });
  const { payroll_run_id: runId } = await apiAs<{ payroll_run_id: string }>(page, '/api/x402/payroll/execute', {
    method: 'POST',
    body: { employer_id: employerId, decision_id },
  });
  return { runId, employeeId };
}

describe('payslips', () => {
  it('the owner views and downloads a run payslip; the employee finds it in the portal, views and downloads it', async () => {
    const owner = await signedIn(browser, 'owner');
    const { owned_employer_id: employerId } = await sessionOf(owner.page);
    const { runId, employeeId } = await payDemoEmployee(owner.page, employerId!);
    const slip = await waitFor(
      'the payslip to be paid',
      () => apiAs<{ payslip: Payslip }>(owner.page, `/api/employees/${employeeId}/payslips/${runId}`).then((b) => b.payslip),
      (s) => s.status === 'paid',
      60_000,
    );
    // Net of any advance the demo employee claimed earlier: the PDF shows it to the cent.
    const net = displayUsd(BigInt(slip.net_amount));

    // Owner: the run page lists one payslip per employee; "View" opens it, "Download PDF" saves it.
    const page = owner.page;
    await visit(page, FLOW, `/dashboard/payroll/${runId}`);
    const table = page.getByRole('region', { name: 'Payslips, one per employee' });
    const row = table.getByRole('row').filter({ hasText: 'Ada Lovelace' });
    await row.waitFor({ state: 'visible' });
    await expect.poll(() => row.innerText()).toContain(net);
    await screenshot(page, FLOW, '/dashboard/payroll/run-payslips');
    const ownerPdf = await downloadedPdf(page, row.getByRole('button', { name: 'Download PDF' }));
    expect(ownerPdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(ownerPdf.name).toMatch(/^payslip-\d{4}-\d{2}-\d{2}-[0-9a-f]{8}\.pdf$/);
    expect(ownerPdf.text).toContain('Ada Lovelace');
    expect(ownerPdf.text).toContain(`Net pay\n${net}`);
    await row.getByRole('link', { name: /^View the payslip/ }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/payroll/${runId}/payslips/${employeeId}`);
    await expect.poll(() => page.getByTestId('payslip-net').innerText()).toBe(net);
    await screenshot(page, FLOW, '/dashboard/payroll/payslip');
    expect(await visibleAlerts(page)).toEqual([]);
    expectNoPageErrors(owner);
    await owner.context.close();

    // Employee: the payslips list (from the portal's menu), the payslip, its PDF; the activity card links to it.
    const employee = await signedIn(browser, 'employee');
    const portal = employee.page;
    await visit(portal, FLOW, '/portal');
    await portal.getByRole('link', { name: 'Payslips', exact: true }).click();
    await portal.waitForURL((url) => url.pathname === '/portal/payslips');
    const link = portal.locator(`a[href^="/portal/payslips/${runId}"]`);
    await link.waitFor({ state: 'visible' });
    const mine = portal.getByRole('row').filter({ has: link });
    expect(await mine.innerText()).toContain(net);
    await screenshot(portal, FLOW, '/portal/payslips');
    const employeePdf = await downloadedPdf(portal, mine.getByRole('button', { name: 'Download PDF' }));
    expect(employeePdf.text).toContain(`Net pay\n${net}`);
    await link.click();
    await portal.waitForURL((url) => url.pathname === `/portal/payslips/${runId}`);
    await expect.poll(() => portal.getByTestId('payslip-net').innerText()).toBe(net);
    const fromView = await downloadedPdf(portal, portal.getByTestId('payslip').getByRole('button', { name: 'Download PDF' }));
    expect(fromView.text).toContain(`Net pay\n${net}`);
    await screenshot(portal, FLOW, '/portal/payslip');

    await visit(portal, FLOW, '/portal/activity');
    await portal.locator(`a[href^="/portal/payslips/${runId}"]`).first().waitFor({ state: 'visible' });
    expect(await visibleAlerts(portal)).toEqual([]);
    expectNoPageErrors(employee);
    await employee.context.close();
  });
});
