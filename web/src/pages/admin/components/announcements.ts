import type { Schema } from '../../../lib/api';
import { checkFields, type FieldErrors, type FieldSpec, type Rule } from '../../../lib/form';

export const SEVERITIES = ['info', 'success', 'warning', 'error'] as const;
export const AUDIENCES = ['all', 'employers', 'employees', 'admins'] as const;
export const STATES = ['draft', 'scheduled', 'active', 'expired'] as const;
export type Severity = (typeof SEVERITIES)[number];
export type Audience = (typeof AUDIENCES)[number];
export type AnnouncementState = (typeof STATES)[number];

/** The platform admin's view of an announcement (`GET /api/admin/announcements`). */
export type AdminAnnouncement = Schema<'AdminAnnouncement'>;
export type AdminAnnouncementList = Schema<'AdminAnnouncementList'>;

/** What the form edits; `expires_at` in the `datetime-local` input's format (local time). */
export interface AnnouncementDraft {
  title: string;
  body: string;
  severity: Severity;
  audience: Audience;
  link_url: string;
  link_label: string;
  expires_at: string;
}

export const EMPTY_DRAFT: AnnouncementDraft = { title: '', body: '', severity: 'info', audience: 'all', link_url: '', link_label: '', expires_at: '' };

/** Spec 2.12 / docs/api.md bounds (the server checks them; the form only counts). */
export const LIMITS = { title: 120, body: 600, link_label: 40 } as const;

/** Characters as the server counts them (code points: an emoji is one). */
export const charCount = (text: string) => [...text.trim()].length;

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO timestamp as the value of a `datetime-local` input, in the browser's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (local time) as ISO 8601 UTC; '' is null. An unparsable value goes to the server as typed, which names it. */
export function fromLocalInput(value: string): string | null {
  if (!value.trim()) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export function draftOf(a: AdminAnnouncement): AnnouncementDraft {
  return {
    title: a.title,
    body: a.body,
    severity: a.severity,
    audience: a.audience,
    link_url: a.link_url ?? '',
    link_label: a.link_label ?? '',
    expires_at: toLocalInput(a.expires_at),
  };
}

/** The create body: empty optional fields are left out. */
export function createBody(draft: AnnouncementDraft, publishNow: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { title: draft.title, body: draft.body, severity: draft.severity, audience: draft.audience };
  const expires = fromLocalInput(draft.expires_at);
  if (expires !== null) body.expires_at = expires;
  if (draft.link_url.trim()) body.link_url = draft.link_url;
  if (draft.link_label.trim()) body.link_label = draft.link_label;
  if (publishNow) body.publish_now = true;
  return body;
}

/** The PATCH body: only what changed against the announcement as loaded (so an untouched expiry keeps its seconds). */
export function patchBody(original: AnnouncementDraft, draft: AnnouncementDraft, publishNow: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (draft.title !== original.title) body.title = draft.title;
  if (draft.body !== original.body) body.body = draft.body;
  if (draft.severity !== original.severity) body.severity = draft.severity;
  if (draft.audience !== original.audience) body.audience = draft.audience;
  if (draft.link_url !== original.link_url) body.link_url = draft.link_url.trim() ? draft.link_url : null;
  if (draft.link_label !== original.link_label) body.link_label = draft.link_label.trim() ? draft.link_label : null;
  if (draft.expires_at !== original.expires_at) body.expires_at = fromLocalInput(draft.expires_at);
  if (publishNow) body.publish_now = true;
  return body;
}

// ---- the server's rules for a draft (src/features/announcements/schema.ts), in its words -------

// eslint-disable-next-line no-control-regex -- the server refuses these characters; so does the form
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex -- as above, line breaks and tabs allowed
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const RELATIVE_PATH = /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/;
const HTTPS_PREFIX = /^https:\/\/[^\\\s]+$/i;
const LINK_URL_MAX = 2048;

/** Trimmed text of 1..max characters (an empty optional field is not sent, so it passes). */
const text =
  (max: number, multiLine: boolean, optional = false): Rule =>
  (value) => {
    const count = charCount(value);
    if (optional && count === 0) return null;
    if (count < 1 || count > max) return `must be 1-${max} characters (after trimming)`;
    if ((multiLine ? CONTROL_BUT_LINES : ANY_CONTROL).test(value.trim())) {
      return multiLine ? 'must not contain control or bidirectional-override characters other than line breaks and tabs' : 'must not contain control or bidirectional-override characters';
    }
    return null;
  };

/** https with a host and no credentials, or a same-site path (the server's isSafeLink). */
const safeLink: Rule = (raw) => {
  const value = raw.trim();
  if (!value || RELATIVE_PATH.test(value)) return null;
  const problem = `must be an https URL or a relative path starting with a single "/" (at most ${LINK_URL_MAX} characters)`;
  if (value.length > LINK_URL_MAX || !HTTPS_PREFIX.test(value)) return problem;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '' ? null : problem;
  } catch {
    return problem;
  }
};

export const DRAFT_CHECKS: Record<'title' | 'body' | 'link_url' | 'link_label', FieldSpec> = {
  title: { label: 'Title', rules: [text(LIMITS.title, false)] },
  body: { label: 'Body', rules: [text(LIMITS.body, true)] },
  link_url: { label: 'Link URL', rules: [safeLink] },
  link_label: { label: 'Link label', rules: [text(LIMITS.link_label, false, true)] },
};

/** The service's field names in its messages ("is required with link_url"), read as the form's labels. */
export const readableProblem = (message: string) =>
  message.replace(/\blink_url\b/g, 'a link URL').replace(/\blink_label\b/g, 'a link label').replace(/\bpublished_at\b/g, 'the publishing time').replace(/\bexpires_at\b/g, 'the expiry');

/** Every problem of the draft at once, before sending; the link and its label go together. */
export function checkDraft(draft: AnnouncementDraft): FieldErrors<keyof AnnouncementDraft> {
  const errors: FieldErrors<keyof AnnouncementDraft> = checkFields(draft, DRAFT_CHECKS);
  const [url, label] = [draft.link_url.trim(), draft.link_label.trim()];
  if (url && !label && !errors.link_label) errors.link_label = readableProblem('Link label is required with link_url');
  if (label && !url && !errors.link_url) errors.link_url = readableProblem('Link URL is required with link_label');
  return errors;
}
