import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import { recordAudit } from '../../audit/store.js';
import type { AnnouncementState } from './schema.js';
import * as store from './store.js';
import type { AdminAnnouncementRow, AnnouncementChanges, AnnouncementRow, Audience } from './store.js';

/** Spec 8.1: banners shown per user. */
export const MAX_ACTIVE = 5;

type Severity = AnnouncementRow['severity'];

/** A create request, already parsed field by field (routes); the rules across fields live here. */
export interface NewAnnouncementInput {
  title: string;
  body: string;
  severity: Severity;
  audience: Audience;
  publishedAt?: string | null | undefined;
  publishNow?: true | undefined;
  expiresAt?: string | null | undefined;
  linkUrl?: string | null | undefined;
  linkLabel?: string | null | undefined;
}

export type AnnouncementPatch = Partial<NewAnnouncementInput>;

/** The state of an announcement at `now` (the same rules as `store.inState`). */
export function stateAt(row: Pick<AnnouncementRow, 'publishedAt' | 'expiresAt'>, now: Date): AnnouncementState {
  if (row.publishedAt === null) return 'draft';
  if (row.publishedAt > now) return 'scheduled';
  if (row.expiresAt !== null && row.expiresAt <= now) return 'expired';
  return 'active';
}

/** The audiences a caller belongs to: everyone is in `all`; a user with several roles is in each. */
export function audiencesOf(caller: Caller): Audience[] {
  const audiences: Audience[] = ['all'];
  if (caller.ownedEmployerId !== null) audiences.push('employers');
  if (caller.employeeIds.length > 0) audiences.push('employees');
  if (caller.isPlatformAdmin) audiences.push('admins');
  return audiences;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** A banner as a signed-in user sees it. */
export function presentAnnouncement(row: AnnouncementRow) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    severity: row.severity,
    audience: row.audience,
    published_at: row.publishedAt!.toISOString(),
    expires_at: iso(row.expiresAt),
    link_url: row.linkUrl,
    link_label: row.linkLabel,
  };
}

/** An announcement as a platform admin sees it, with its state at `now`. */
export function presentForAdmin(row: AdminAnnouncementRow, now: Date) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    severity: row.severity,
    audience: row.audience,
    state: stateAt(row, now),
    published_at: iso(row.publishedAt),
    expires_at: iso(row.expiresAt),
    link_url: row.linkUrl,
    link_label: row.linkLabel,
    created_by: row.createdBy,
    dismissals: row.dismissals,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const EDITABLE = ['title', 'body', 'severity', 'audience', 'publishedAt', 'expiresAt', 'linkUrl', 'linkLabel'] as const;
type Editable = (typeof EDITABLE)[number];
const FIELD_NAMES: Record<Editable, string> = {
  title: 'title',
  body: 'body',
  severity: 'severity',
  audience: 'audience',
  publishedAt: 'published_at',
  expiresAt: 'expires_at',
  linkUrl: 'link_url',
  linkLabel: 'link_label',
};
type Values = Pick<AnnouncementRow, Editable>;

const same = (a: Values[Editable], b: Values[Editable]) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
const auditValue = (value: Values[Editable]) => (value instanceof Date ? value.toISOString() : value);

/**
 * System announcements (spec 2.12, 3.2): platform admins write them; every signed-in user reads
 * the banners of their audiences and may dismiss each one for good.
 */
export class AnnouncementsService {
  private readonly database: Database;
  private readonly clock: () => Date;

  /** `clock`: the time now (tests may pin it); default the service's clock (database.clock). */
  constructor(options: { database: Database; clock?: () => Date }) {
    this.database = options.database;
    this.clock = options.clock ?? (() => options.database.clock.now());
  }

  async list(caller: Caller, query: { page: number; limit: number; state?: AnnouncementState | undefined }) {
    requireAdmin(caller);
    const now = this.clock();
    const { rows, total } = await store.listAnnouncements(this.database.db, {
      offset: (query.page - 1) * query.limit,
      limit: query.limit,
      state: query.state,
      now,
    });
    return { page: query.page, limit: query.limit, total, announcements: rows.map((row) => presentForAdmin(row, now)) };
  }

  async create(caller: Caller, input: NewAnnouncementInput, requestId: string) {
    requireAdmin(caller);
    const now = this.clock();
    const values = resolve(
      { title: '', body: '', severity: 'info', audience: 'all', publishedAt: null, expiresAt: null, linkUrl: null, linkLabel: null },
      input,
      now,
    );
    const row = await this.database.transaction(async (tx) => {
      const inserted = await store.insertAnnouncement(tx.db, { ...values, createdBy: caller.userId });
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'admin',
        action: 'announcement.created',
        targetType: 'announcement',
        targetId: inserted.id,
        details: {
          title: inserted.title,
          severity: inserted.severity,
          audience: inserted.audience,
          published_at: iso(inserted.publishedAt),
          expires_at: iso(inserted.expiresAt),
          link_url: inserted.linkUrl,
        },
        requestId,
      });
      return inserted;
    });
    return presentForAdmin({ ...row, dismissals: 0 }, now);
  }

  /**
   * A partial edit, checked as a whole against the stored announcement. Dismissals stay: a user
   * who dismissed it never sees it again, whatever changes (spec 3.2). A value equal to the stored
   * one is no change; an edit that changes nothing writes nothing and is not audited.
   */
  async update(caller: Caller, id: string, patch: AnnouncementPatch, requestId: string) {
    requireAdmin(caller);
    const now = this.clock();
    await this.database.transaction(async (tx) => {
      const current = await store.findForUpdate(tx.db, id);
      if (!current) throw notFound('Announcement');
      const next = resolve(current, patch, now);
      const changed = EDITABLE.filter((field) => !same(current[field], next[field]));
      if (changed.length === 0) return;
      const changes: AnnouncementChanges = Object.fromEntries(changed.map((field) => [field, next[field]]));
      await store.updateAnnouncement(tx.db, id, changes);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'admin',
        action: 'announcement.updated',
        targetType: 'announcement',
        targetId: id,
        details: {
          changed: changed.map((field) => FIELD_NAMES[field]),
          before: Object.fromEntries(changed.map((field) => [FIELD_NAMES[field], auditValue(current[field])])),
          after: Object.fromEntries(changed.map((field) => [FIELD_NAMES[field], auditValue(next[field])])),
        },
        requestId,
      });
    });
    const row = await store.findWithDismissals(this.database.db, id);
    if (!row) throw notFound('Announcement');
    return presentForAdmin(row, now);
  }

  /** Deletes it with every dismissal (ON DELETE CASCADE). */
  async remove(caller: Caller, id: string, requestId: string): Promise<void> {
    requireAdmin(caller);
    await this.database.transaction(async (tx) => {
      const current = await store.findForUpdate(tx.db, id);
      if (!current) throw notFound('Announcement');
      const dismissals = await store.countDismissals(tx.db, id);
      await store.deleteAnnouncement(tx.db, id);
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'admin',
        action: 'announcement.deleted',
        targetType: 'announcement',
        targetId: id,
        details: {
          title: current.title,
          audience: current.audience,
          state: stateAt(current, this.clock()),
          dismissals,
        },
        requestId,
      });
    });
  }

  /** The caller's banners: at most 5 (spec 8.1). */
  async active(caller: Caller) {
    const rows = await store.activeFor(this.database.db, caller.userId, audiencesOf(caller), this.clock(), MAX_ACTIVE);
    return rows.map(presentAnnouncement);
  }

  /**
   * Dismisses for good; a second call changes nothing. The caller must be in its audience and it
   * must be published (a draft or a scheduled one answers 404 like an unknown id). An expired one
   * can still be dismissed: a click that races the expiry is not an error.
   */
  async dismiss(caller: Caller, id: string): Promise<void> {
    const db = this.database.db;
    const row = await store.findPublishedFor(db, id, audiencesOf(caller), this.clock());
    if (!row) throw notFound('Announcement');
    try {
      await store.insertDismissal(db, id, caller.userId);
    } catch (error) {
      // Deleted between the read and the insert: it is gone, as for an unknown id.
      if (isForeignKeyViolation(error)) throw notFound('Announcement');
      throw error;
    }
  }
}

const isForeignKeyViolation = (error: unknown) =>
  [(error as { code?: string }).code, (error as { cause?: { code?: string } }).cause?.code].includes('23503');

function requireAdmin(caller: Caller): void {
  if (!caller.isPlatformAdmin) throw new AppError('FORBIDDEN', 'Platform admins only.');
}

/**
 * The announcement after applying `input` to `base`, with the rules across fields:
 * `publish_now` sets published_at to now (not together with published_at); expires_at must be
 * after published_at; link_url and link_label go together (clearing link_url clears the label).
 * A 400 names the field the request set (the other one when it set only one of a pair).
 */
function resolve(base: Values, input: AnnouncementPatch, now: Date): Values {
  if (input.publishNow && input.publishedAt !== undefined) {
    throw badRequest('publish_now', 'send either publish_now or published_at, not both');
  }
  const next: Values = { ...base };
  if (input.title !== undefined) next.title = input.title;
  if (input.body !== undefined) next.body = input.body;
  if (input.severity !== undefined) next.severity = input.severity;
  if (input.audience !== undefined) next.audience = input.audience;
  if (input.publishNow) next.publishedAt = now;
  else if (input.publishedAt !== undefined) next.publishedAt = input.publishedAt === null ? null : new Date(input.publishedAt);
  if (input.expiresAt !== undefined) next.expiresAt = input.expiresAt === null ? null : new Date(input.expiresAt);
  if (input.linkUrl !== undefined) next.linkUrl = input.linkUrl;
  if (input.linkLabel !== undefined) next.linkLabel = input.linkLabel;
  if (input.linkUrl === null && input.linkLabel === undefined) next.linkLabel = null;

  if (next.publishedAt !== null && next.expiresAt !== null && next.expiresAt <= next.publishedAt) {
    const setExpiry = input.expiresAt !== undefined;
    throw setExpiry || !(input.publishedAt !== undefined || input.publishNow)
      ? badRequest('expires_at', 'must be after published_at')
      : badRequest('published_at', 'must be before expires_at');
  }
  if (next.linkUrl !== null && next.linkLabel === null) throw badRequest('link_label', 'is required with link_url');
  if (next.linkLabel !== null && next.linkUrl === null) throw badRequest('link_url', 'is required with link_label');
  return next;
}
