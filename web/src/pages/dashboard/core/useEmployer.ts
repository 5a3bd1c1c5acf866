import { useSession } from '../../../session';

/** The signed-in owner's employer id, or null when they own none yet. */
export function useEmployerId(): string | null {
  return useSession().session?.owned_employer_id ?? null;
}
