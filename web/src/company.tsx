import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { useLocation } from 'react-router';
import { api, type Employer } from './lib/api';
import { useSession } from './session';

interface CompanyState {
  /** The employer the signed-in user owns; null while loading, on error, or when they own none. */
  employer: Employer | null;
  error: Error | null;
  reload(): void;
  /** After a change the page made (a rename), so the header and titles follow at once. */
  setEmployer(employer: Employer): void;
}

const CompanyContext = createContext<CompanyState | null>(null);

/** The owned employer, read once per sign-in for the header, the page titles and Settings. */
export function CompanyProvider({ children }: { children: ReactNode }) {
  const employerId = useSession().session?.owned_employer_id ?? null;
  const [employer, setEmployer] = useState<Employer | null>(null);
  const [error, setError] = useState<Error | null>(null);

  const reload = useCallback(() => {
    setEmployer(null);
    setError(null);
    if (!employerId) return;
    api<Employer>(`/api/employers/${employerId}`)
      .then(setEmployer)
      .catch((reason: unknown) => setError(reason instanceof Error ? reason : new Error(String(reason))));
  }, [employerId]);
  useEffect(reload, [reload]);

  return <CompanyContext.Provider value={{ employer, error, reload, setEmployer }}>{children}</CompanyContext.Provider>;
}

export function useCompany(): CompanyState {
  const state = useContext(CompanyContext);
  if (!state) throw new Error('useCompany outside CompanyProvider');
  return state;
}

/** The tab's title for a page: "Team · Acme · Payroll" (the company on the employer's pages). */
export function usePageTitle(title: string): void {
  const employer = useContext(CompanyContext)?.employer;
  const name = useLocation().pathname.startsWith('/dashboard') ? employer?.name : undefined;
  useEffect(() => {
    document.title = [title, name, 'Payroll'].filter(Boolean).join(' · ');
  }, [title, name]);
}
