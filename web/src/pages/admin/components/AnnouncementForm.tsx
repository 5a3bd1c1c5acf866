import { useId, useState, type ReactNode } from 'react';
import { api } from '../../../lib/api';
import { serverFieldErrors, type FieldErrors, type FieldSpec } from '../../../lib/form';
import { BannerPreview } from './BannerPreview';
import {
  AUDIENCES,
  charCount,
  checkDraft,
  createBody,
  DRAFT_CHECKS,
  draftOf,
  EMPTY_DRAFT,
  LIMITS,
  patchBody,
  readableProblem,
  SEVERITIES,
  type AdminAnnouncement,
  type AnnouncementDraft,
} from './announcements';

type FieldName = keyof AnnouncementDraft;

/** Every field the server may refuse, with its label (the checked ones with their rules). */
const SERVER_FIELDS: Record<FieldName, FieldSpec> = {
  ...DRAFT_CHECKS,
  severity: { label: 'Severity', rules: [] },
  audience: { label: 'Audience', rules: [] },
  expires_at: { label: 'Expires at', rules: [] },
};

type SaveAction = 'draft' | 'publish' | 'save';

/**
 * Create (no `editing`) or edit an announcement, with the banner's live preview. Create offers
 * "Save draft" and "Publish now"; editing a draft offers the same, editing a published one
 * "Save changes" (and "Publish now" while it is scheduled or expired).
 */
export function AnnouncementForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing: AdminAnnouncement | null;
  onSaved: (saved: AdminAnnouncement, action: SaveAction) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const { draft, busy, errors, formError, set, submit } = useAnnouncementDraft(id, editing, onSaved);
  const f = formFields(id, draft, errors, set);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const isDraft = !editing || editing.state === 'draft';

  return (
    <div className="ap-form-grid">
      <form
        className="card ap-form"
        aria-labelledby={`${id}-heading`}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit(isDraft ? 'draft' : 'save');
        }}
      >
        <h2 id={`${id}-heading`} tabIndex={-1}>
          {editing ? `Edit “${editing.title}”` : 'New announcement'}
        </h2>

        <TitleAndBodyFields f={f} />
        <SeverityAndAudienceFields f={f} />
        <LinkFields f={f} />
        <ExpiryField f={f} zone={zone} />

        {formError && (
          <p className="field-error" role="alert">
            {formError}
          </p>
        )}

        <FormActions editing={editing} isDraft={isDraft} busy={busy} submit={submit} onCancel={onCancel} />
      </form>
      <BannerPreview draft={draft} />
    </div>
  );
}

/** The draft being written, and saving it (create, or patch only what changed). */
function useAnnouncementDraft(formId: string, editing: AdminAnnouncement | null, onSaved: (saved: AdminAnnouncement, action: SaveAction) => void) {
  const original = editing ? draftOf(editing) : EMPTY_DRAFT;
  const [draft, setDraft] = useState<AnnouncementDraft>(original);
  const [busy, setBusy] = useState<null | SaveAction>(null);
  const [errors, setErrors] = useState<FieldErrors<FieldName>>({});
  const [formError, setFormError] = useState<string | null>(null);

  const set = (name: FieldName, value: string) => {
    setDraft((current) => ({ ...current, [name]: value }));
    if (errors[name]) setErrors(({ [name]: _fixed, ...rest }) => rest as FieldErrors<FieldName>);
  };

  const submit = async (action: SaveAction) => {
    setFormError(null);
    const problems = checkDraft(draft);
    setErrors(problems);
    if (Object.keys(problems).length > 0) {
      document.getElementById(`${formId}-${Object.keys(problems)[0]}`)?.focus();
      return;
    }
    setBusy(action);
    try {
      let saved: AdminAnnouncement;
      if (editing) {
        const body = patchBody(original, draft, action === 'publish');
        saved = Object.keys(body).length === 0 ? editing : await api<AdminAnnouncement>(`/api/admin/announcements/${editing.id}`, { method: 'PATCH', body });
      } else {
        saved = await api<AdminAnnouncement>('/api/admin/announcements', { method: 'POST', body: createBody(draft, action === 'publish') });
        setDraft(EMPTY_DRAFT);
      }
      onSaved(saved, action);
    } catch (reason) {
      const fields = serverFieldErrors(reason, SERVER_FIELDS);
      if (fields) setErrors(Object.fromEntries(Object.entries(fields).map(([name, message]) => [name, readableProblem(String(message))])));
      else setFormError(reason instanceof Error ? reason.message : String(reason));
    } finally {
      setBusy(null);
    }
  };

  return { draft, busy, errors, formError, set, submit };
}

/** What every field of the form needs: its value and setter, its id, and its error and counter wiring. */
interface FormFields {
  draft: AnnouncementDraft;
  set: (name: FieldName, value: string) => void;
  fieldId: (name: FieldName) => string;
  fieldError: (name: FieldName) => ReactNode;
  describedBy: (name: FieldName, ...extra: string[]) => string | undefined;
  invalid: (name: FieldName) => true | undefined;
  counter: (name: 'title' | 'body' | 'link_label') => ReactNode;
}

function formFields(id: string, draft: AnnouncementDraft, errors: FieldErrors<FieldName>, set: FormFields['set']): FormFields {
  const fieldId = (name: FieldName) => `${id}-${name}`;
  return {
    draft,
    set,
    fieldId,
    fieldError: (name) =>
      errors[name] ? (
        <p className="field-error" id={`${fieldId(name)}-error`} role="alert">
          {errors[name]}
        </p>
      ) : null,
    describedBy: (name, ...extra) => [...extra, ...(errors[name] ? [`${fieldId(name)}-error`] : [])].join(' ') || undefined,
    invalid: (name) => (errors[name] ? true : undefined),
    counter: (name) => {
      const count = charCount(draft[name]);
      return (
        <span id={`${fieldId(name)}-count`} className={count > LIMITS[name] ? 'ap-count field-error' : 'ap-count muted'}>
          {count} / {LIMITS[name]} characters
        </span>
      );
    },
  };
}

function TitleAndBodyFields({ f }: { f: FormFields }) {
  const { draft, set, fieldId, fieldError, describedBy, invalid, counter } = f;
  return (
    <>
      <label htmlFor={fieldId('title')}>Title</label>
      <input
        id={fieldId('title')}
        value={draft.title}
        onChange={(e) => set('title', e.target.value)}
        aria-required="true"
        aria-invalid={invalid('title')}
        aria-describedby={describedBy('title', `${fieldId('title')}-count`)}
        autoComplete="off"
      />
      {counter('title')}
      {fieldError('title')}

      <label htmlFor={fieldId('body')}>Body</label>
      <textarea
        id={fieldId('body')}
        rows={4}
        value={draft.body}
        onChange={(e) => set('body', e.target.value)}
        aria-required="true"
        aria-invalid={invalid('body')}
        aria-describedby={describedBy('body', `${fieldId('body')}-count`)}
      />
      {counter('body')}
      {fieldError('body')}
    </>
  );
}

function SeverityAndAudienceFields({ f }: { f: FormFields }) {
  const { draft, set, fieldId, fieldError, describedBy, invalid } = f;
  return (
    <div className="ap-form-row">
      <div>
        <label htmlFor={fieldId('severity')}>Severity</label>
        <select id={fieldId('severity')} value={draft.severity} onChange={(e) => set('severity', e.target.value)} aria-invalid={invalid('severity')} aria-describedby={describedBy('severity')}>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        {fieldError('severity')}
      </div>
      <div>
        <label htmlFor={fieldId('audience')}>Audience</label>
        <select id={fieldId('audience')} value={draft.audience} onChange={(e) => set('audience', e.target.value)} aria-invalid={invalid('audience')} aria-describedby={describedBy('audience')}>
          {AUDIENCES.map((a) => (
            <option key={a} value={a}>
              {a === 'all' ? 'all signed-in users' : a}
            </option>
          ))}
        </select>
        {fieldError('audience')}
      </div>
    </div>
  );
}

function LinkFields({ f }: { f: FormFields }) {
  const { draft, set, fieldId, fieldError, describedBy, invalid, counter } = f;
  return (
    <>
      <label htmlFor={fieldId('link_url')}>Link URL</label>
      <input
        id={fieldId('link_url')}
        value={draft.link_url}
        onChange={(e) => set('link_url', e.target.value)}
        inputMode="url"
        placeholder="https://… or /dashboard/…"
        aria-invalid={invalid('link_url')}
        aria-describedby={describedBy('link_url', `${fieldId('link_url')}-hint`)}
        autoComplete="off"
      />
      <span id={`${fieldId('link_url')}-hint`} className="muted ap-hint">
        Optional: an https address or a path on this site; needs a link label.
      </span>
      {fieldError('link_url')}

      <label htmlFor={fieldId('link_label')}>Link label</label>
      <input
        id={fieldId('link_label')}
        value={draft.link_label}
        onChange={(e) => set('link_label', e.target.value)}
        aria-invalid={invalid('link_label')}
        aria-describedby={describedBy('link_label', `${fieldId('link_label')}-count`)}
        autoComplete="off"
      />
      {counter('link_label')}
      {fieldError('link_label')}
    </>
  );
}

function ExpiryField({ f, zone }: { f: FormFields; zone: string }) {
  const { draft, set, fieldId, fieldError, describedBy, invalid } = f;
  return (
    <>
      <label htmlFor={fieldId('expires_at')}>Expires at</label>
      <input
        id={fieldId('expires_at')}
        type="datetime-local"
        value={draft.expires_at}
        onChange={(e) => set('expires_at', e.target.value)}
        aria-invalid={invalid('expires_at')}
        aria-describedby={describedBy('expires_at', `${fieldId('expires_at')}-hint`)}
      />
      <span id={`${fieldId('expires_at')}-hint`} className="muted ap-hint">
        Optional, your local time ({zone}); empty: shown until deleted or expired.
      </span>
      {fieldError('expires_at')}
    </>
  );
}

function FormActions({
  editing,
  isDraft,
  busy,
  submit,
  onCancel,
}: {
  editing: AdminAnnouncement | null;
  isDraft: boolean;
  busy: SaveAction | null;
  submit: (action: SaveAction) => Promise<void>;
  onCancel: () => void;
}) {
  const canPublish = !editing || editing.state !== 'active';
  return (
    <div className="row ap-actions">
      {isDraft ? (
        <button type="button" className="button secondary" disabled={busy !== null} onClick={() => void submit('draft')}>
          {busy === 'draft' ? 'Saving…' : 'Save draft'}
        </button>
      ) : (
        <button type="button" className="button secondary" disabled={busy !== null} onClick={() => void submit('save')}>
          {busy === 'save' ? 'Saving…' : 'Save changes'}
        </button>
      )}
      {canPublish && (
        <button type="button" className="button" disabled={busy !== null} onClick={() => void submit('publish')}>
          {busy === 'publish' ? 'Publishing…' : 'Publish now'}
        </button>
      )}
      {editing && (
        <button type="button" className="link-button" disabled={busy !== null} onClick={onCancel}>
          Cancel editing
        </button>
      )}
    </div>
  );
}
