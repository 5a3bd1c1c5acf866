import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { isSafeLink } from './schema.js';

/** System announcements (spec 2.12, 3.2, 4.8, 8.1). */
let t: TestApp;
const tokens: Record<Role, string> = {} as Record<Role, string>;

type Role = 'admin' | 'owner' | 'employee' | 'plain' | 'multi';
type Audience = 'all' | 'employers' | 'employees' | 'admins';
type State = 'draft' | 'scheduled' | 'published' | 'expired' | 'dismissed';

interface AdminView {
  id: string;
  title: string;
  body: string;
  severity: string;
  audience: string;
  state: string;
  published_at: string | null;
  expires_at: string | null;
  link_url: string | null;
  link_label: string | null;
  created_by: string;
  dismissals: number;
  created_at: string;
  updated_at: string;
}
interface Banner {
  id: string;
  title: string;
  severity: string;
}

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;
const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const base = { title: 'Heads up', body: 'Something to know.', severity: 'info', audience: 'all' } as const;

const create = (body: Record<string, unknown>, token = tokens.admin) => t.request('POST', '/api/admin/announcements', { token, body });
async function created(body: Record<string, unknown>): Promise<AdminView> {
  const res = await create(body);
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return json<AdminView>(res);
}
const patch = (id: string, body: Record<string, unknown>, token = tokens.admin) => t.request('PATCH', `/api/admin/announcements/${id}`, { token, body });
const remove = (id: string, token = tokens.admin) => t.request('DELETE', `/api/admin/announcements/${id}`, { token });
const dismiss = (id: string, token: string) => t.request('POST', `/api/announcements/${id}/dismiss`, { token });
async function active(token: string): Promise<Banner[]> {
  const res = await t.request('GET', '/api/announcements/active', { token });
  expect(res.status).toBe(200);
  return (await json<{ announcements: Banner[] }>(res)).announcements;
}
const reset = () => t.database.pool.query('DELETE FROM announcements');
const auditOf = async (id: string) =>
  (
    await t.database.pool.query<{ action: string; actor_kind: string; actor_user_id: string; details: Record<string, unknown> }>(
      'SELECT action, actor_kind, actor_user_id, details FROM audit_log WHERE target_type = $1 AND target_id = $2 ORDER BY created_at, id',
      ['announcement', id],
    )
  ).rows;

beforeAll(async () => {
  t = await startTestApp({ ADMIN_USER_IDS: 'ann-admin' });
  tokens.admin = await t.token('ann-admin', 'admin@platform.example');
  tokens.owner = await t.token('ann-owner', 'owner@tenant.example');
  tokens.plain = await t.token('ann-plain', 'plain@nowhere.example');
  tokens.multi = await t.token('ann-multi', 'multi@tenant.example');
  await t.request('POST', '/api/employers', { token: tokens.owner, body: { name: 'Tenant Co' } });
  await t.request('POST', '/api/employers', { token: tokens.multi, body: { name: 'Multi Co' } });
  for (const email of ['employee@tenant.example', 'multi@tenant.example']) {
    const res = await t.request('POST', '/api/employees', { token: tokens.owner, body: { email, full_name: email } });
    expect(res.status).toBe(201);
  }
  // Signing in with the verified email links the employee record.
  tokens.employee = await t.token('ann-employee', 'employee@tenant.example');
  for (const role of ['owner', 'employee', 'plain', 'multi', 'admin'] as const) await active(tokens[role]);
});
afterAll(() => t.close());

// ---- visibility matrix --------------------------------------------------------------------------

const AUDIENCES: Audience[] = ['all', 'employers', 'employees', 'admins'];
const STATES: State[] = ['draft', 'scheduled', 'published', 'expired', 'dismissed'];
/** Which audiences each role belongs to (`multi` owns an employer and is an employee elsewhere). */
const MEMBERSHIP: Record<Role, Audience[]> = {
  admin: ['all', 'admins'],
  owner: ['all', 'employers'],
  employee: ['all', 'employees'],
  plain: ['all'],
  multi: ['all', 'employers', 'employees'],
};
const ROLES = Object.keys(MEMBERSHIP) as Role[];
const matrix = ROLES.flatMap((role) =>
  AUDIENCES.flatMap((audience) =>
    STATES.map((state) => ({ role, audience, state, visible: state === 'published' && MEMBERSHIP[role].includes(audience) })),
  ),
);

describe('visibility: role x audience x state', () => {
  const ids = new Map<string, string>();
  const seen = new Map<Role, Banner[]>();
  const dismissStatus = new Map<string, number>();

  beforeAll(async () => {
    await reset();
    const timing: Record<State, Record<string, unknown>> = {
      draft: {},
      scheduled: { published_at: at(HOUR) },
      published: { published_at: at(-HOUR) },
      expired: { published_at: at(-2 * HOUR), expires_at: at(-HOUR) },
      dismissed: { published_at: at(-HOUR), expires_at: at(24 * HOUR) },
    };
    for (const audience of AUDIENCES) {
      for (const state of STATES) {
        const row = await created({ ...base, audience, title: `${audience}/${state}`, ...timing[state] });
        ids.set(`${audience}/${state}`, row.id);
      }
    }
    // Every role dismisses the "dismissed" announcement of every audience: allowed only in its audience.
    for (const role of ROLES) {
      for (const audience of AUDIENCES) {
        const res = await dismiss(ids.get(`${audience}/dismissed`)!, tokens[role]);
        dismissStatus.set(`${role}:${audience}`, res.status);
      }
    }
    for (const role of ROLES) seen.set(role, await active(tokens[role]));
  });

  it.each(matrix)('$role, audience $audience, $state: visible $visible', ({ role, audience, state, visible }) => {
    const titles = seen.get(role)!.map((b) => b.title);
    expect(titles.includes(`${audience}/${state}`)).toBe(visible);
  });

  it.each(ROLES.flatMap((role) => AUDIENCES.map((audience) => ({ role, audience, allowed: MEMBERSHIP[role].includes(audience) }))))(
    '$role dismissing an announcement for $audience: allowed $allowed',
    ({ role, audience, allowed }) => {
      expect(dismissStatus.get(`${role}:${audience}`)).toBe(allowed ? 204 : 404);
    },
  );

  it('shows a user with several roles the union of their audiences', () => {
    expect(seen.get('multi')!.map((b) => b.title).sort()).toEqual(['all/published', 'employees/published', 'employers/published']);
    expect(seen.get('plain')!.map((b) => b.title)).toEqual(['all/published']);
  });

  it('lists every announcement for the admin with its state and dismissal count', async () => {
    const res = await t.request('GET', '/api/admin/announcements', { token: tokens.admin });
    expect(res.status).toBe(200);
    const page = await json<{ total: number; announcements: AdminView[] }>(res);
    expect(page.total).toBe(AUDIENCES.length * STATES.length);
    const byTitle = new Map(page.announcements.map((a) => [a.title, a]));
    const expectedState: Record<State, string> = { draft: 'draft', scheduled: 'scheduled', published: 'active', expired: 'expired', dismissed: 'active' };
    for (const audience of AUDIENCES) {
      for (const state of STATES) expect(byTitle.get(`${audience}/${state}`)?.state, `${audience}/${state}`).toBe(expectedState[state]);
      // Dismissed by every role in its audience.
      expect(byTitle.get(`${audience}/dismissed`)!.dismissals).toBe(ROLES.filter((r) => MEMBERSHIP[r].includes(audience)).length);
    }
    expect(page.announcements[0]!.created_by).toBe('ann-admin');
    // Newest created first.
    expect(page.announcements[0]!.title).toBe('admins/dismissed');
    const drafts = await json<{ total: number; announcements: AdminView[] }>(await t.request('GET', '/api/admin/announcements?state=draft&limit=2', { token: tokens.admin }));
    expect(drafts.total).toBe(4);
    expect(drafts.announcements).toHaveLength(2);
    expect(drafts.announcements.every((a) => a.state === 'draft')).toBe(true);
  });

  it('answers 404 to dismissing a draft, a scheduled one, an unknown id, and 400 to a malformed id', async () => {
    expect((await dismiss(ids.get('all/draft')!, tokens.plain)).status).toBe(404);
    expect((await dismiss(ids.get('all/scheduled')!, tokens.plain)).status).toBe(404);
    const unknown = await dismiss('00000000-0000-4000-8000-000000000000', tokens.plain);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ code: 'NOT_FOUND' });
    expect(await json(await dismiss('nope', tokens.plain))).toMatchObject({ code: 'VALIDATION_ERROR', field: 'id' });
    // Expired but once shown: a late click is still accepted.
    expect((await dismiss(ids.get('all/expired')!, tokens.plain)).status).toBe(204);
    expect((await t.request('POST', `/api/announcements/${ids.get('all/published')}/dismiss`)).status).toBe(401);
  });
});

// ---- ordering and the cap -----------------------------------------------------------------------

describe('ordering and the cap of 5', () => {
  it('orders error, warning, success, info, then newest published first, at most 5', async () => {
    await reset();
    const MIN = 60_000;
    const specs: [string, string, number][] = [
      ['A', 'info', -10 * MIN],
      ['B', 'error', -50 * MIN],
      ['C', 'warning', -5 * MIN],
      ['D', 'error', -1 * MIN],
      ['E', 'success', -20 * MIN],
      ['F', 'info', -2 * MIN],
      ['G', 'warning', -30 * MIN],
    ];
    const ids: Record<string, string> = {};
    for (const [title, severity, offset] of specs) ids[title] = (await created({ ...base, title, severity, published_at: at(offset) })).id;
    expect((await active(tokens.plain)).map((b) => b.title)).toEqual(['D', 'B', 'C', 'G', 'E']);
    // Dismissing one lets the next in line in.
    expect((await dismiss(ids.D!, tokens.plain)).status).toBe(204);
    expect((await active(tokens.plain)).map((b) => b.title)).toEqual(['B', 'C', 'G', 'E', 'F']);
    // Others still see D.
    expect((await active(tokens.owner))[0]!.title).toBe('D');
    const res = await t.request('GET', '/api/announcements/active', { token: tokens.plain });
    expect(res.headers.get('cache-control')).toBe('no-store');
    const [first] = (await json<{ announcements: Record<string, unknown>[] }>(res)).announcements;
    expect(Object.keys(first!).sort()).toEqual(['audience', 'body', 'expires_at', 'id', 'link_label', 'link_url', 'published_at', 'severity', 'title']);
  });
});

// ---- validation ---------------------------------------------------------------------------------

describe('validation', () => {
  const cases: [string, Record<string, unknown>, number, string?][] = [
    ['title of 0 characters', { title: '' }, 400, 'title'],
    ['title of only spaces', { title: '   ' }, 400, 'title'],
    ['title of 1 character', { title: 'a' }, 201],
    ['title of 120 characters', { title: 'a'.repeat(120) }, 201],
    ['title of 121 characters', { title: 'a'.repeat(121) }, 400, 'title'],
    ['title of 120 emoji (characters, not UTF-16 units)', { title: '\u{1F4E2}'.repeat(120) }, 201],
    ['title of 121 emoji', { title: '\u{1F4E2}'.repeat(121) }, 400, 'title'],
    ['title with a line break', { title: 'two\nlines' }, 400, 'title'],
    ['title with a right-to-left override', { title: 'pay \u202Eedoc' }, 400, 'title'],
    ['body of 0 characters', { body: '' }, 400, 'body'],
    ['body of 1 character', { body: 'b' }, 201],
    ['body of 600 characters', { body: 'b'.repeat(600) }, 201],
    ['body of 601 characters', { body: 'b'.repeat(601) }, 400, 'body'],
    ['body with line breaks', { body: 'line one\nline two' }, 201],
    ['body with a NUL', { body: 'bad\u0000byte' }, 400, 'body'],
    ['missing title', { title: undefined }, 400, 'title'],
    ['bad severity', { severity: 'critical' }, 400, 'severity'],
    ['missing severity', { severity: undefined }, 400, 'severity'],
    ['bad audience', { audience: 'everyone' }, 400, 'audience'],
    ['unknown field', { colour: 'red' }, 400, 'colour'],
    ['created_by from the body', { created_by: 'someone-else' }, 400, 'created_by'],
    ['published_at not a timestamp', { published_at: 'tomorrow' }, 400, 'published_at'],
    ['published_at without a zone', { published_at: '2030-01-01T00:00:00' }, 400, 'published_at'],
    ['expires_at before published_at', { published_at: at(HOUR), expires_at: at(-HOUR) }, 400, 'expires_at'],
    ['expires_at equal to published_at', { published_at: '2030-01-01T00:00:00Z', expires_at: '2030-01-01T00:00:00Z' }, 400, 'expires_at'],
    ['expires_at in the past with publish_now', { publish_now: true, expires_at: at(-HOUR) }, 400, 'expires_at'],
    ['publish_now and published_at', { publish_now: true, published_at: at(0) }, 400, 'publish_now'],
    ['expires_at on a draft', { expires_at: at(HOUR) }, 201],
    ['https link', { link_url: 'https://status.example.com/incidents/42', link_label: 'Status page' }, 201],
    ['relative link', { link_url: '/dashboard/settings/billing?tab=plan#top', link_label: 'Billing' }, 201],
    ['link label of 40 characters', { link_url: '/portal', link_label: 'l'.repeat(40) }, 201],
    ['link label of 41 characters', { link_url: '/portal', link_label: 'l'.repeat(41) }, 400, 'link_label'],
    ['link without a label', { link_url: '/portal' }, 400, 'link_label'],
    ['label without a link', { link_label: 'Go' }, 400, 'link_url'],
    ['http link', { link_url: 'http://example.com', link_label: 'Go' }, 400, 'link_url'],
    ['javascript: link', { link_url: 'javascript:alert(1)', link_label: 'Go' }, 400, 'link_url'],
    ['protocol-relative link', { link_url: '//evil.example/x', link_label: 'Go' }, 400, 'link_url'],
    ['backslash link', { link_url: '/\\evil.example', link_label: 'Go' }, 400, 'link_url'],
    ['link without a slash', { link_url: 'dashboard', link_label: 'Go' }, 400, 'link_url'],
    ['link with credentials', { link_url: 'https://user:pw@example.com', link_label: 'Go' }, 400, 'link_url'],
    ['data: link', { link_url: 'data:text/html,<script>alert(1)</script>', link_label: 'Go' }, 400, 'link_url'],
  ];

  it.each(cases)('%s -> %i', async (_name, override, status, field) => {
    const res = await create({ ...base, ...override });
    expect(res.status).toBe(status);
    if (field) expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('trims title and body and sets created_by from the caller', async () => {
    const row = await created({ ...base, title: '  Spaced  ', body: '\n Body \n', publish_now: true });
    expect(row).toMatchObject({ title: 'Spaced', body: 'Body', created_by: 'ann-admin', state: 'active', dismissals: 0 });
    expect(Math.abs(Date.parse(row.published_at!) - Date.now())).toBeLessThan(60_000);
  });

  it('refuses unsafe links in the helper too', () => {
    for (const ok of ['https://a.example', 'HTTPS://a.example/x', '/', '/a/b?c=d']) expect(isSafeLink(ok), ok).toBe(true);
    for (const bad of ['https:a.example', 'https:\\\\a.example', 'https://', ' /a', '/a b', 'vbscript:x', '\\\\host', `/${'a'.repeat(2048)}`]) {
      expect(isSafeLink(bad), bad).toBe(false);
    }
  });

  it('applies the same rules to an edit, on the announcement as a whole', async () => {
    const row = await created({ ...base, published_at: at(-HOUR), expires_at: at(HOUR), link_url: '/portal', link_label: 'Portal' });
    const refusals: [Record<string, unknown>, string][] = [
      [{ title: 'a'.repeat(121) }, 'title'],
      [{ body: '' }, 'body'],
      [{ severity: 'fatal' }, 'severity'],
      [{ audience: 'robots' }, 'audience'],
      [{ published_at: at(2 * HOUR) }, 'published_at'],
      [{ expires_at: at(-2 * HOUR) }, 'expires_at'],
      [{ link_label: null }, 'link_label'],
      [{ link_url: 'http://example.com' }, 'link_url'],
      [{ created_by: 'x' }, 'created_by'],
    ];
    for (const [body, field] of refusals) {
      const res = await patch(row.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    expect((await patch(row.id, {})).status).toBe(400);
    // Clearing the link clears its label.
    expect(await json(await patch(row.id, { link_url: null }))).toMatchObject({ link_url: null, link_label: null });
    // Back to a draft.
    expect(await json(await patch(row.id, { published_at: null }))).toMatchObject({ state: 'draft', published_at: null });
    expect((await patch('00000000-0000-4000-8000-000000000000', { title: 'x' })).status).toBe(404);
    expect(await json(await patch('nope', { title: 'x' }))).toMatchObject({ field: 'id' });
  });
});

// ---- admin only, dismissals, editing, deleting, audit --------------------------------------------

describe('administration', () => {
  it('answers 403 FORBIDDEN to every other user on every admin route, and 401 without a token', async () => {
    const row = await created({ ...base, publish_now: true });
    for (const role of ['owner', 'employee', 'plain', 'multi'] as const) {
      const token = tokens[role];
      const responses = [
        await t.request('GET', '/api/admin/announcements', { token }),
        await create(base, token),
        await patch(row.id, { title: 'hijacked' }, token),
        await remove(row.id, token),
        // Refused before validation: a non-admin learns nothing about the input rules either.
        await create({ title: '' }, token),
        await patch('nope', {}, token),
      ];
      for (const res of responses) {
        expect(res.status, role).toBe(403);
        expect(await json(res)).toMatchObject({ code: 'FORBIDDEN' });
      }
    }
    expect((await t.request('GET', '/api/admin/announcements')).status).toBe(401);
    expect((await t.request('POST', '/api/admin/announcements', { body: base })).status).toBe(401);
    expect((await t.request('GET', '/api/announcements/active')).status).toBe(401);
    // Nothing changed.
    const after = await json<{ announcements: AdminView[] }>(await t.request('GET', '/api/admin/announcements', { token: tokens.admin }));
    expect(after.announcements.find((a) => a.id === row.id)!.title).toBe(base.title);
  });

  it('dismisses idempotently and for good: editing does not deliver it again', async () => {
    await reset();
    const row = await created({ ...base, title: 'Maintenance', severity: 'warning', publish_now: true });
    expect((await active(tokens.employee)).map((b) => b.id)).toEqual([row.id]);
    expect((await dismiss(row.id, tokens.employee)).status).toBe(204);
    expect((await dismiss(row.id, tokens.employee)).status).toBe(204);
    const { rows } = await t.database.pool.query('SELECT user_id FROM announcement_dismissals WHERE announcement_id = $1', [row.id]);
    expect(rows).toEqual([{ user_id: 'ann-employee' }]);
    expect(await active(tokens.employee)).toEqual([]);

    const edited = await json<AdminView>(await patch(row.id, { title: 'Maintenance moved', severity: 'error', body: 'New time.', published_at: at(-1000) }));
    expect(edited).toMatchObject({ title: 'Maintenance moved', severity: 'error', dismissals: 1 });
    expect(await active(tokens.employee)).toEqual([]);
    expect((await active(tokens.owner)).map((b) => b.title)).toEqual(['Maintenance moved']);
  });

  it('deletes with its dismissals (cascade) and 404s an unknown id', async () => {
    const row = await created({ ...base, publish_now: true });
    await dismiss(row.id, tokens.plain);
    await dismiss(row.id, tokens.owner);
    const count = async () => (await t.database.pool.query('SELECT count(*)::int AS n FROM announcement_dismissals WHERE announcement_id = $1', [row.id])).rows[0].n;
    expect(await count()).toBe(2);
    expect((await remove(row.id)).status).toBe(204);
    expect(await count()).toBe(0);
    expect((await t.database.pool.query('SELECT 1 FROM announcements WHERE id = $1', [row.id])).rowCount).toBe(0);
    expect((await remove(row.id)).status).toBe(404);
    expect((await dismiss(row.id, tokens.plain)).status).toBe(404);
  });

  it('writes every admin change to the audit log, and nothing for an edit that changes nothing', async () => {
    const row = await created({ ...base, title: 'Audited', audience: 'employers', publish_now: true });
    await patch(row.id, { title: 'Audited twice', audience: 'employers' });
    await patch(row.id, { title: 'Audited twice' }); // no change
    await dismiss(row.id, tokens.owner);
    await remove(row.id);
    const entries = await auditOf(row.id);
    expect(entries.map((e) => e.action)).toEqual(['announcement.created', 'announcement.updated', 'announcement.deleted']);
    for (const entry of entries) expect(entry).toMatchObject({ actor_kind: 'admin', actor_user_id: 'ann-admin' });
    expect(entries[0]!.details).toMatchObject({ title: 'Audited', audience: 'employers', severity: 'info' });
    expect(entries[1]!.details).toEqual({ changed: ['title'], before: { title: 'Audited' }, after: { title: 'Audited twice' } });
    expect(entries[2]!.details).toMatchObject({ title: 'Audited twice', dismissals: 1, state: 'active' });
    // The admin view shows them too.
    const audit = await json<{ items: { action: string; target_id: string }[] }>(
      await t.request('GET', '/api/admin?scope=audit_log', { token: tokens.admin }),
    );
    expect(audit.items.filter((a) => a.target_id === row.id).map((a) => a.action)).toEqual(['announcement.deleted', 'announcement.updated', 'announcement.created']);
  });

  it('honours Idempotency-Key on create', async () => {
    const send = () => t.request('POST', '/api/admin/announcements', { token: tokens.admin, body: { ...base, title: 'Once' }, headers: { 'idempotency-key': 'ann-once' } });
    const first = await json<AdminView>(await send());
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await json<AdminView>(again)).id).toBe(first.id);
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM announcements WHERE title = 'Once'");
    expect(rows[0].n).toBe(1);
  });

  it('is described in the OpenAPI document, which stays valid', async () => {
    const document = await json<{ paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>> }>(
      await t.request('GET', '/api/openapi.json'),
    );
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    const expected: [string, string, string[]][] = [
      ['/api/admin/announcements', 'get', ['200', '401', '403']],
      ['/api/admin/announcements', 'post', ['201', '400', '401', '403']],
      ['/api/admin/announcements/{id}', 'patch', ['200', '400', '401', '403', '404']],
      ['/api/admin/announcements/{id}', 'delete', ['204', '401', '403', '404']],
      ['/api/announcements/active', 'get', ['200', '401']],
      ['/api/announcements/{id}/dismiss', 'post', ['204', '401', '404']],
    ];
    for (const [path, method, statuses] of expected) {
      const route = document.paths[path]?.[method];
      expect(route, `${method} ${path}`).toBeDefined();
      expect(route!.security).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(route!.responses)).toEqual(expect.arrayContaining(statuses));
    }
  });
});
