import { z } from '@hono/zod-openapi';
import { SEVERITIES } from '../notifications/index.js';
import { AUDIENCES } from './tables.js';

/** Spec 2.12 / 8.1 limits, in characters (Unicode code points, as PostgreSQL's char_length counts). */
export const TITLE_MAX = 120;
export const BODY_MAX = 600;
export const LINK_LABEL_MAX = 40;
export const LINK_URL_MAX = 2048;
export const ANNOUNCEMENT_STATES = ['draft', 'scheduled', 'active', 'expired'] as const;
export type AnnouncementState = (typeof ANNOUNCEMENT_STATES)[number];

/** Characters as a person (and PostgreSQL) counts them: an emoji is one, not two UTF-16 units. */
export const charCount = (text: string) => [...text].length;

// Control characters, and the bidirectional overrides that make a banner read differently from
// what it says (U+202A-202E, U+2066-2069).
// eslint-disable-next-line no-control-regex
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// Multi-line text keeps line breaks and tabs; every other control character is refused.
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Trimmed text of 1..max characters (code points), without control characters. */
const text = (max: number, multiLine: boolean) =>
  z
    .string()
    .trim()
    .refine((value) => charCount(value) >= 1 && charCount(value) <= max, `must be 1-${max} characters (after trimming)`)
    .refine(
      (value) => !(multiLine ? CONTROL_BUT_LINES : ANY_CONTROL).test(value),
      multiLine
        ? 'must not contain control or bidirectional-override characters other than line breaks and tabs'
        : 'must not contain control or bidirectional-override characters',
    );

// A relative path: one leading slash, then printable ASCII without a backslash (browsers read
// `//host` and `/\host` as another site) and without spaces.
const RELATIVE_PATH = /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/;
// An absolute link: https only, written out (`https:host` and backslashes parse as https too).
const HTTPS_PREFIX = /^https:\/\/[^\\\s]+$/i;

/** https URL with a host and no credentials, or a same-site relative path (`/dashboard/...`). */
export function isSafeLink(value: string): boolean {
  if (value.length > LINK_URL_MAX) return false;
  if (RELATIVE_PATH.test(value)) return true;
  // eslint-disable-next-line no-control-regex
  if (!HTTPS_PREFIX.test(value) || /[\u0000-\u001f\u007f]/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

const title = text(TITLE_MAX, false).openapi({ description: `1-${TITLE_MAX} characters after trimming; one line.`, example: 'Scheduled maintenance on Saturday' });
const body = text(BODY_MAX, true).openapi({
  description: `1-${BODY_MAX} characters after trimming; line breaks allowed. Plain text: clients render it as text, never as HTML.`,
  example: 'Payroll submissions pause from 02:00 to 03:00 UTC.',
});
const isoTimestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with a zone, e.g. 2026-11-01T00:00:00Z' });
const linkUrl = z
  .string()
  .trim()
  .refine(isSafeLink, `must be an https URL or a relative path starting with a single "/" (at most ${LINK_URL_MAX} characters)`)
  .openapi({ description: 'Call to action: an https URL or a same-site path such as `/dashboard/settings`. http, `javascript:`, `//host` are refused.', example: '/dashboard/settings/billing' });
const linkLabel = text(LINK_LABEL_MAX, false).openapi({ description: `1-${LINK_LABEL_MAX} characters; required with link_url.`, example: 'Review billing' });

const fields = {
  title,
  body,
  severity: z.enum(SEVERITIES).openapi({ description: 'Banner colour and ordering: error, warning, success, info.' }),
  audience: z.enum(AUDIENCES).openapi({ description: '`employers` (employer owners), `employees`, `admins` (platform admins) or `all` signed-in users.' }),
  published_at: isoTimestamp.nullable().openapi({ description: 'When it becomes visible; null or absent = draft. A future time schedules it.' }),
  publish_now: z.literal(true).openapi({ description: 'Sets published_at to the server\'s current time; not together with published_at.' }),
  expires_at: isoTimestamp.nullable().openapi({ description: 'When it stops being shown; null = never. Must be after published_at.' }),
  link_url: linkUrl.nullable(),
  link_label: linkLabel.nullable(),
};

export const CreateAnnouncementBody = z
  .strictObject({
    title: fields.title,
    body: fields.body,
    severity: fields.severity,
    audience: fields.audience,
    published_at: fields.published_at.optional(),
    publish_now: fields.publish_now.optional(),
    expires_at: fields.expires_at.optional(),
    link_url: fields.link_url.optional(),
    link_label: fields.link_label.optional(),
  })
  .openapi('AnnouncementCreate');

export const UpdateAnnouncementBody = z
  .strictObject({
    title: fields.title.optional(),
    body: fields.body.optional(),
    severity: fields.severity.optional(),
    audience: fields.audience.optional(),
    published_at: fields.published_at.optional(),
    publish_now: fields.publish_now.optional(),
    expires_at: fields.expires_at.optional(),
    link_url: fields.link_url.optional().openapi({ description: 'null removes the call to action (and its label).' }),
    link_label: fields.link_label.optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, 'at least one field to change is required')
  .openapi('AnnouncementUpdate');

export const AnnouncementIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Announcement id.' }),
});

export const AdminListQuery = z.object({
  state: z.enum(ANNOUNCEMENT_STATES).optional().openapi({ param: { name: 'state', in: 'query' }, description: 'Only announcements in this state.' }),
  page: z.coerce.number().int().min(1).default(1).openapi({ param: { name: 'page', in: 'query' }, description: '1-indexed page.' }),
  limit: z.coerce.number().int().min(1).max(200).default(100).openapi({ param: { name: 'limit', in: 'query' }, description: 'Page size, 1-200 (default 100).' }),
});

const timestamp = z.string().openapi({ format: 'date-time' });

/** What a signed-in user sees in a banner. */
export const Announcement = z
  .object({
    id: z.uuid(),
    title: z.string(),
    body: z.string(),
    severity: z.enum(SEVERITIES),
    audience: z.enum(AUDIENCES),
    published_at: timestamp,
    expires_at: timestamp.nullable(),
    link_url: z.string().nullable(),
    link_label: z.string().nullable(),
  })
  .openapi('Announcement');

/** The platform admin's view: every field, with the computed state. */
export const AdminAnnouncement = z
  .object({
    id: z.uuid(),
    title: z.string(),
    body: z.string(),
    severity: z.enum(SEVERITIES),
    audience: z.enum(AUDIENCES),
    state: z.enum(ANNOUNCEMENT_STATES).openapi({
      description: '`draft` (no published_at), `scheduled` (published_at in the future), `active`, `expired` (expires_at reached).',
    }),
    published_at: timestamp.nullable(),
    expires_at: timestamp.nullable(),
    link_url: z.string().nullable(),
    link_label: z.string().nullable(),
    created_by: z.string().openapi({ description: 'The platform admin who created it.' }),
    dismissals: z.number().int().openapi({ description: 'How many users dismissed it.' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('AdminAnnouncement');

export const AdminAnnouncementList = z
  .object({
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    announcements: z.array(AdminAnnouncement),
  })
  .openapi('AdminAnnouncementList');

export const ActiveAnnouncements = z
  .object({
    announcements: z.array(Announcement).openapi({ description: 'At most 5: error, warning, success, info, then newest published first.' }),
  })
  .openapi('ActiveAnnouncements');
