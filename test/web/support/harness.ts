import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { getAddress } from 'viem';
import { expect, inject } from 'vitest';

/** Browser-test helpers: one Chromium per test file, a fresh context per signed-in user. */

const ROOT = path.resolve(import.meta.dirname, '../../..');
export const RESULTS_DIR = path.join(ROOT, 'test-results', 'web');

/** The demo tenant's users (src/features/demo/seed.ts) and their buttons on /signin. */
export const USERS = {
  owner: { id: 'demo-owner', button: 'Demo employer owner' },
  employee: { id: 'demo-employee', button: 'Demo employee' },
  admin: { id: 'demo-admin', button: 'Platform admin' },
} as const;
export type UserKey = keyof typeof USERS;

export function baseUrl(): string {
  return inject('webBaseUrl');
}

function chromiumPath(): string {
  const configured = process.env.CHROMIUM_PATH?.trim();
  if (configured) return configured;
  // Debian's /usr/bin/chromium is a wrapper script; the binary behind it starts faster and cleaner.
  for (const candidate of ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('Chromium not found: install Debian\'s `chromium` package or set CHROMIUM_PATH');
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true, // adds --headless
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** A page plus every uncaught error it threw (`pageerror`). */
export interface Tab {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

export async function newTab(browser: Browser): Promise<Tab> {
  const context = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(30_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.stack ?? error.message}`));
  return { context, page, errors };
}

/** A fresh context signed in through /signin's "sign in as" buttons (local mode). */
export async function signedIn(browser: Browser, user: UserKey): Promise<Tab> {
  const tab = await newTab(browser);
  await signIn(tab.page, user);
  return tab;
}

export async function signIn(page: Page, user: UserKey): Promise<void> {
  await page.goto('/signin');
  await page.getByRole('button', { name: USERS[user].button, exact: true }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: 20_000 });
}

/** Unique per call: names, emails and titles that never collide with an earlier run. */
export function uniqueTag(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** A new EVM address in its EIP-55 spelling: how the service stores and answers addresses (#33). */
export function freshEvmAddress(): string {
  return getAddress(`0x${randomBytes(20).toString('hex')}`);
}

function fileNameFor(route: string): string {
  const trimmed = route.replace(/^\/+|\/+$/g, '');
  return (trimmed === '' ? 'root' : trimmed).replace(/[/]+/g, '__').replace(/[^A-Za-z0-9_.:-]/g, '-').replace(/:/g, '');
}

/** Waits (best effort) for spinners to go and the network to settle, then saves a full-page PNG. */
export async function screenshot(page: Page, flow: string, route?: string): Promise<string> {
  // (Some pages keep a spinner on purpose, e.g. a draft run waiting for its transaction.)
  await page.locator('.spinner').first().waitFor({ state: 'detached', timeout: 5_000 }).catch(() => undefined);
  await page.waitForLoadState('networkidle', { timeout: 3_000 }).catch(() => undefined);
  const dir = path.join(RESULTS_DIR, flow);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${fileNameFor(route ?? new URL(page.url()).pathname)}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Opens a route, waits for its h1 and screenshots it. */
export async function visit(page: Page, flow: string, route: string): Promise<void> {
  await page.goto(route);
  await page.locator('h1').first().waitFor({ state: 'visible' });
  await screenshot(page, flow);
}

/** Retries until `read` gives a value `accept` takes; the last value is in the error. */
export async function waitFor<T>(description: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 15_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await read();
      if (accept(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}; last value: ${JSON.stringify(last)}${lastError ? `; last error: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The API as the page's signed-in user (the SPA's bearer in localStorage). */
export async function apiAs<T>(page: Page, apiPath: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const result = await page.evaluate(
    async ({ apiPath, method, body }) => {
      // Runs in the page (the root tsconfig has no DOM types).
      const storage = (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage;
      const token = storage.getItem('payroll.token');
      const headers: Record<string, string> = { accept: 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(apiPath, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: response.status, text: await response.text() };
    },
    { apiPath, method: init.method ?? 'GET', body: init.body },
  );
  if (result.status < 200 || result.status > 299) throw new Error(`${init.method ?? 'GET'} ${apiPath}: ${result.status} ${result.text}`);
  return (result.text ? JSON.parse(result.text) : undefined) as T;
}

export interface SessionInfo {
  user_id: string;
  owned_employer_id: string | null;
  employee_ids: string[];
  is_platform_admin: boolean;
}

export function sessionOf(page: Page): Promise<SessionInfo> {
  return apiAs<SessionInfo>(page, '/api/session');
}

/**
 * Picks an option of a control by its accessible name: a <select> (by value or label) or a
 * radio group (the radio whose label matches).
 */
export async function choose(page: Page, name: string, option: string): Promise<void> {
  const select = page.getByRole('combobox', { name, exact: true });
  if ((await select.count()) > 0) {
    const values = await select.first().locator('option').evaluateAll((options) => options.map((o) => ({ value: (o as unknown as { value: string }).value, label: o.textContent?.trim() ?? '' })));
    const wanted = option.toLowerCase();
    const match = values.find((o) => o.value.toLowerCase() === wanted) ?? values.find((o) => o.label.toLowerCase() === wanted) ?? values.find((o) => o.label.toLowerCase().startsWith(wanted));
    if (!match) throw new Error(`"${name}" has no option "${option}" (options: ${values.map((o) => o.label || o.value).join(', ')})`);
    await select.first().selectOption(match.value);
    return;
  }
  const group = page.getByRole('radiogroup', { name, exact: true });
  const scope: Page | Locator = (await group.count()) > 0 ? group.first() : page.getByRole('group', { name, exact: true }).first();
  await scope.getByRole('radio', { name: new RegExp(`^${option.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i') }).first().check();
}

/** Fails with every uncaught page error, if any. */
export function expectNoPageErrors(tab: Tab): void {
  expect(tab.errors, `uncaught page errors:\n${tab.errors.join('\n')}`).toEqual([]);
}

/** Visible text of role=alert elements: the pages' error states. */
export async function visibleAlerts(page: Page): Promise<string[]> {
  const alerts = page.locator('[role="alert"]:not([data-testid="announcement-banner"])');
  const texts: string[] = [];
  for (const alert of await alerts.all()) {
    if (await alert.isVisible()) texts.push((await alert.innerText()).trim());
  }
  return texts;
}

/**
 * Steps the payroll wizard forward until "Submit payroll" shows, and returns that button.
 * `onStep(step)` runs on each step before it goes on. Warnings (a period or a person paid before:
 * a rerun, or another flow) load after their step shows, so the owner's confirmation is given
 * whenever they appear while waiting for the next button.
 */
export async function stepToSubmit(page: Page, onStep?: (step: number) => Promise<unknown>): Promise<Locator> {
  const submit = page.getByRole('button', { name: 'Submit payroll', exact: true });
  const forward = page.getByRole('button', { name: /^(next|continue|review)\b/i }).first();
  const confirm = page.getByLabel(/I have checked/);
  for (let step = 1; ; step++) {
    await page.getByRole('button', { name: /^(next|continue|review|submit payroll)\b/i }).first().waitFor({ state: 'visible' });
    if (await submit.isVisible()) return submit;
    if (step > 8) throw new Error('the payroll wizard never offered "Submit payroll"');
    await onStep?.(step);
    await waitFor(
      "the wizard's next button to be enabled",
      async () => {
        if ((await confirm.isVisible()) && !(await confirm.isChecked())) await confirm.check();
        return forward.isEnabled();
      },
      Boolean,
    );
    await forward.click();
  }
}
