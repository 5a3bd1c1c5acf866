import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, launchBrowser, newTab, screenshot, sessionOf, signIn, visibleAlerts, type Tab, type UserKey } from './support/harness.js';

/** Flow 5: every route of web/src/App.tsx, as the user it is for: an h1, no uncaught error, a screenshot. */
const FLOW = 'routes';
const APP_TSX = path.resolve(import.meta.dirname, '../../web/src/App.tsx');

type Who = UserKey | 'anonymous';
interface RouteCase {
  /** The route as App.tsx declares it (full path). */
  pattern: string;
  who: Who;
  /** Where the browser should end up, when the route redirects. */
  landsOn?: string;
}

const ROUTES: RouteCase[] = [
  { pattern: '/', who: 'anonymous', landsOn: '/signin' },
  { pattern: '/signin', who: 'anonymous' },
  { pattern: '/dashboard', who: 'owner' },
  { pattern: '/dashboard/team', who: 'owner' },
  { pattern: '/dashboard/team/add', who: 'owner' },
  { pattern: '/dashboard/team/:employeeId', who: 'owner' },
  { pattern: '/dashboard/payroll', who: 'owner' },
  { pattern: '/dashboard/payroll/new', who: 'owner' },
  { pattern: '/dashboard/payroll/:runId', who: 'owner' },
  { pattern: '/dashboard/payroll/:runId/payslips/:employeeId', who: 'owner' },
  { pattern: '/dashboard/treasury', who: 'owner' },
  { pattern: '/dashboard/treasury/deposit', who: 'owner' },
  { pattern: '/dashboard/cards', who: 'owner' },
  { pattern: '/dashboard/compliance', who: 'owner' },
  { pattern: '/dashboard/api-access', who: 'owner' },
  { pattern: '/dashboard/settings', who: 'owner' },
  { pattern: '/dashboard/settings/billing', who: 'owner' },
  { pattern: '/dashboard/settings/agents', who: 'owner' },
  { pattern: '/dashboard/settings/deposit-addresses', who: 'owner' },
  { pattern: '/dashboard/demo', who: 'owner' },
  { pattern: '/admin', who: 'admin' },
  { pattern: '/admin/announcements', who: 'admin' },
  { pattern: '/portal', who: 'employee' },
  { pattern: '/portal/activity', who: 'employee' },
  { pattern: '/portal/payslips', who: 'employee' },
  { pattern: '/portal/payslips/:runId', who: 'employee' },
  { pattern: '*', who: 'anonymous' },
];

/**
 * The full paths App.tsx declares: `<Route path=...>` and `<Route index>`, joined to their parents.
 * A small scanner over the JSX (braces and strings skipped), enough for that file's shape.
 */
function declaredRoutes(source: string): string[] {
  const found: string[] = [];
  const stack: string[] = [];
  const tag = /<Route\b|<\/Route>/g;
  let match: RegExpExecArray | null;
  while ((match = tag.exec(source))) {
    if (match[0] === '</Route>') {
      stack.pop();
      continue;
    }
    // Find the end of the opening tag at brace depth 0.
    let depth = 0;
    let i = match.index + match[0].length;
    let quote: string | null = null;
    for (; i < source.length; i++) {
      const c = source[i]!;
      if (quote) {
        if (c === quote) quote = null;
      } else if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '{') depth++;
      else if (c === '}') depth--;
      else if (c === '>' && depth === 0) break;
    }
    const attributes = source.slice(match.index, i);
    const selfClosing = source[i - 1] === '/';
    const parent = stack.at(-1) ?? '';
    const own = /\bpath="([^"]*)"/.exec(attributes.replace(/\{[\s\S]*\}/g, ''))?.[1];
    const isIndex = /\bindex\b/.test(attributes.replace(/\{[\s\S]*\}/g, ''));
    const full = own === undefined ? parent : own.startsWith('/') || own === '*' ? own : `${parent.replace(/\/$/, '')}/${own}`;
    if (isIndex || own !== undefined) found.push(full);
    if (!selfClosing) stack.push(full);
    tag.lastIndex = i + 1;
  }
  // A layout route with an index child is the same page as that child.
  return [...new Set(found)];
}

let browser: Browser;
const tabs = new Map<Who, Tab>();
const params: Record<string, string> = {};

beforeAll(async () => {
  browser = await launchBrowser();
  for (const who of ['anonymous', 'owner', 'admin', 'employee'] as const) {
    const tab = await newTab(browser);
    if (who !== 'anonymous') await signIn(tab.page, who);
    tabs.set(who, tab);
  }
  // Route parameters from the demo tenant: the demo employee (Ada) and a run that paid her $1,
  // executed by the agent wallet as the wizard does, so her payslip routes have a payslip to show.
  const owner = tabs.get('owner')!.page;
  const { owned_employer_id: employerId } = await sessionOf(owner);
  const { employees } = await apiAs<{ employees: { id: string; email: string }[] }>(owner, `/api/employers/${employerId}/team`);
  params.employeeId = employees.find((e) => e.email === 'ada@demo-payroll.example')!.id;
  const { decision_id } = await apiAs<{ decision_id: string }>(owner, `/api/employers/${employerId}/payroll/decisions`, {
    method: 'POST',
    body: { items: [{ employee_id: params.employeeId, amount_usd: '1.00', chain: 'tempo' }] },
  });
  params.runId = (await apiAs<{ payroll_run_id: string }>(owner, '/api/x402/payroll/execute', { method: 'POST', body: { employer_id: employerId, decision_id } })).payroll_run_id;
});
afterAll(async () => {
  await browser?.close();
});

function urlOf(pattern: string): string {
  if (pattern === '*') return '/no-such-page-e2e';
  return pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (!value) throw new Error(`no value for :${name}`);
    return value;
  });
}

describe('every route', () => {
  it('covers exactly the routes App.tsx declares', () => {
    expect(declaredRoutes(readFileSync(APP_TSX, 'utf8')).sort()).toEqual(ROUTES.map((r) => r.pattern).sort());
  });

  for (const route of ROUTES) {
    it(`${route.pattern} (${route.who})`, async () => {
      const tab = tabs.get(route.who)!;
      const { page } = tab;
      tab.errors.length = 0;
      const url = urlOf(route.pattern);
      await page.goto(url);
      if (route.landsOn) await page.waitForURL((u) => u.pathname === route.landsOn);
      else expect(new URL(page.url()).pathname, 'no redirect away from the route').toBe(url);
      const h1 = page.locator('h1').first();
      const hasH1 = await h1.waitFor({ state: 'visible', timeout: 15_000 }).then(
        () => true,
        () => false,
      );
      await screenshot(page, FLOW, route.pattern === '*' ? 'not-found' : route.pattern);
      expect(hasH1, `${url} has a visible h1`).toBe(true);
      expect((await h1.innerText()).trim(), `${url}'s h1 text`).not.toBe('');
      expect(await visibleAlerts(page), `${url} shows no error state`).toEqual([]);
      expect(tab.errors, `${url}: uncaught page errors`).toEqual([]);
    });
  }
});
