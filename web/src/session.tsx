import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, tokenStore, type Schema } from './lib/api';

export type Session = Schema<'Session'>;

interface SessionState {
  session: Session | null;
  loading: boolean;
  signIn(token: string): Promise<Session>;
  signOut(): void;
  /** Re-reads the roles (after creating an employer, say). */
  refresh(): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

/** The signed-in user: a bearer token kept in localStorage and the roles `GET /api/session` reports. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(null);
  const [loading, setLoading] = useState(true);

  const load = useCallback(async () => {
    if (!tokenStore.get()) {
      setSession(null);
      return null;
    }
    try {
      const current = await api<Session>('/api/session');
      setSession(current);
      return current;
    } catch {
      tokenStore.clear();
      setSession(null);
      return null;
    }
  }, []);

  useEffect(() => {
    void load().finally(() => setLoading(false));
  }, [load]);

  const value: SessionState = {
    session,
    loading,
    signIn: async (token) => {
      tokenStore.set(token);
      const current = await load();
      if (!current) throw new Error('That sign-in was refused.');
      return current;
    },
    signOut: () => {
      tokenStore.clear();
      setSession(null);
    },
    refresh: async () => {
      await load();
    },
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** Where a user lands after signing in: their first role's home. */
export function homeOf(session: Session): string {
  if (session.owned_employer_id) return '/dashboard';
  if (session.employee_ids.length > 0) return '/portal';
  if (session.is_platform_admin) return '/admin';
  return '/dashboard';
}

/** The signed-in owner's employer id, or null when they own none yet. */
export function useEmployerId(): string | null {
  return useSession().session?.owned_employer_id ?? null;
}
