import type { Schema } from '../../../lib/api';

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
