import { useSearchParams } from 'react-router';
import { useSession } from '../../../session';

/**
 * Which of the user's employee records the portal shows: `?employee=<id>` when it is one of
 * theirs, else the first. The activity page may also pick "all" (null).
 */
export function useEmployeeChoice({ allowAll = false }: { allowAll?: boolean } = {}) {
  const { session } = useSession();
  const [params, setParams] = useSearchParams();
  const ids = session?.employee_ids ?? [];
  const asked = params.get('employee');
  const employeeId = asked && ids.includes(asked) ? asked : allowAll ? null : (ids[0] ?? null);
  const choose = (id: string | null) =>
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        if (id) next.set('employee', id);
        else next.delete('employee');
        return next;
      },
      { replace: true },
    );
  return { ids, employeeId, choose };
}

/** A record's name in the picker. Gap: no route gives the employee their employers' names, so records are numbered. */
export const recordLabel = (ids: string[], id: string) => `Employment ${ids.indexOf(id) + 1} (record ${id.slice(0, 8)})`;

/** Shown only when the user is employed more than once (several employers). */
export function EmployeePicker({
  ids,
  employeeId,
  onChoose,
  allowAll = false,
}: {
  ids: string[];
  employeeId: string | null;
  onChoose: (id: string | null) => void;
  allowAll?: boolean;
}) {
  if (ids.length < 2) return null;
  return (
    <div className="ap-picker">
      <label htmlFor="employee-record">Employment</label>
      <select id="employee-record" value={employeeId ?? ''} onChange={(e) => onChoose(e.target.value || null)}>
        {allowAll && <option value="">All employments</option>}
        {ids.map((id) => (
          <option key={id} value={id}>
            {recordLabel(ids, id)}
          </option>
        ))}
      </select>
    </div>
  );
}
