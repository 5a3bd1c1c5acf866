import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, expectNoPageErrors, launchBrowser, screenshot, sessionOf, signedIn, uniqueTag, visibleAlerts, visit, waitFor } from './support/harness.js';

/** Flow 4: the owner pauses every agent with a reason, then resumes them. */
const FLOW = 'agents';

interface Authorization {
  id: string;
  paused_at: string | null;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('agents settings', () => {
  it('pauses and resumes all agents', async () => {
    const tab = await signedIn(browser, 'owner');
    const { page } = tab;
    const { owned_employer_id: employerId } = await sessionOf(page);
    const base = `/api/employers/${employerId}/agents/authorizations`;
    // Something to pause: an authorization of our own (revoked at the end).
    const tag = uniqueTag();
    const created = await apiAs<Authorization>(page, base, {
      method: 'POST',
      body: { label: `E2E agent ${tag}`, agent_identifier: `e2e-agent-${tag}`, per_tx_cap_usd: '10', per_day_cap_usd: '100' },
    });
    const pausedAt = async () => (await apiAs<Authorization>(page, `${base}/${created.id}`)).paused_at;

    try {
      await visit(page, FLOW, '/dashboard/settings/agents');
      const pausedNotice = page.getByText('All agents paused');
      // A new active authorization means not everything is paused.
      expect(await pausedNotice.count()).toBe(0);

      await page.getByLabel('Reason', { exact: true }).fill(`Browser test ${tag}`);
      await page.getByRole('button', { name: 'Pause all agents', exact: true }).click();
      await pausedNotice.first().waitFor({ state: 'visible' });
      expect(await pausedAt()).not.toBeNull();
      expect(await visibleAlerts(page)).toEqual([]);
      await screenshot(page, FLOW, '/dashboard/settings/agents-paused');

      await page.getByRole('button', { name: 'Resume all agents', exact: true }).click();
      await pausedNotice.first().waitFor({ state: 'hidden' });
      await waitFor('the authorization to be resumed', pausedAt, (value) => value === null);
      await screenshot(page, FLOW, '/dashboard/settings/agents-resumed');
      expectNoPageErrors(tab);
    } finally {
      await apiAs(page, `${base}/${created.id}`, { method: 'DELETE' }).catch(() => undefined);
      await tab.context.close();
    }
  });
});
