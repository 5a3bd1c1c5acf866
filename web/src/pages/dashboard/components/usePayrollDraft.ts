import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, newIdempotencyKey, type Employee, type PayrollRun, type PreparedPayrollRun } from '../../../lib/api';
import { fromUnits, monthlyUnits, normaliseAmountInput, toUnits, usdToUnits } from '../../../lib/money';
import type { ExpectedPay, PaySchedule } from '../../../lib/schedule';
import type { CsvItem } from './CsvImport';

export interface Line {
  selected: boolean;
  amount: string;
  /** Typed or imported by the owner: a new period's expected pay no longer replaces it. */
  edited?: boolean;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The server's expected pay of each employee for the period (the rule its outlier warning uses),
 * once both ends are dates; null until then or when it cannot be had (the amounts stay as they are).
 */
function useExpectedPay(employerId: string, start: string, end: string): ExpectedPay | null {
  const [expected, setExpected] = useState<ExpectedPay | null>(null);
  useEffect(() => {
    if (!DAY.test(start) || !DAY.test(end) || end < start) return;
    let live = true;
    api<ExpectedPay>(`/api/employers/${employerId}/payroll/expected?period_start=${start}&period_end=${end}`)
      .then((answer) => live && setExpected(answer))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [employerId, start, end]);
  return expected;
}

export interface DraftAmount {
  employee: Employee;
  units: bigint | null;
}

/**
 * What the first step edits: who is paid and how much (chosen from the team or imported), the pay
 * period and the pay date. With a pay schedule, the next scheduled period and pay date to start
 * with; amounts start at the expected pay for the period (a month's salary without one).
 */
function useDraftLines(employerId: string, employees: Employee[], schedule: PaySchedule | null) {
  const [lines, setLines] = useState<Record<string, Line>>(() =>
    Object.fromEntries(employees.map((e) => [e.id, { selected: e.unpayable_reason === null, amount: fromUnits(monthlyUnits(e.annual_salary_usd)) }])),
  );
  const [periodStart, setPeriodStart] = useState(schedule?.next_period.start ?? '');
  const [periodEnd, setPeriodEnd] = useState(schedule?.next_period.end ?? '');
  const [payDate, setPayDate] = useState(schedule?.next_pay_date ?? '');
  const expected = useExpectedPay(employerId, periodStart, periodEnd);
  useEffect(() => {
    if (!expected) return;
    const amounts = new Map(expected.employees.map((e) => [e.employee_id, fromUnits(usdToUnits(e.expected_usd))]));
    setLines((c) => Object.fromEntries(Object.entries(c).map(([id, line]) => [id, line.edited || !amounts.has(id) ? line : { ...line, amount: amounts.get(id)! }])));
  }, [expected]);
  const [mode, setMode] = useState<'team' | 'csv'>('team');
  const [notice, setNotice] = useState<string | null>(null);
  const chosen = employees.filter((e) => lines[e.id]?.selected && e.unpayable_reason === null);
  const amounts: DraftAmount[] = chosen.map((e) => ({ employee: e, units: toUnits(normaliseAmountInput(lines[e.id]!.amount)) }));
  const total = amounts.reduce((sum, a) => sum + (a.units ?? 0n), 0n);
  const items = amounts.map((a) => ({ employee_id: a.employee.id, amount_usd: fromUnits(a.units ?? 0n) }));
  /** The run as the server's checks and prepare read it. */
  const checkBody = {
    items,
    ...(periodStart ? { pay_period_start: periodStart } : {}),
    ...(periodEnd ? { pay_period_end: periodEnd } : {}),
    ...(payDate ? { pay_date: payDate } : {}),
  };
  const edit = {
    setLine: (id: string, line: Line) => setLines((c) => ({ ...c, [id]: line })),
    selectPayable: () => setLines((c) => Object.fromEntries(employees.map((e) => [e.id, { ...c[e.id]!, selected: e.unpayable_reason === null }]))),
    selectNone: () => setLines((c) => Object.fromEntries(Object.entries(c).map(([id, l]) => [id, { ...l, selected: false }]))),
    /** CSV rows replace the selection: imported employees are chosen with the file's amount, the rest left out. */
    applyCsv: (csvItems: CsvItem[]) => {
      const byId = new Map(csvItems.map((i) => [i.employee_id, i.amount]));
      setLines((c) => Object.fromEntries(Object.entries(c).map(([id, line]) => [id, byId.has(id) ? { selected: true, amount: byId.get(id)!, edited: true } : { ...line, selected: false }])));
      setMode('team');
      setNotice(`Imported ${csvItems.length} ${csvItems.length === 1 ? 'row' : 'rows'} from the CSV file. Review the amounts below.`);
    },
  };
  return { lines, periodStart, periodEnd, setPeriodStart, setPeriodEnd, payDate, setPayDate, schedule, mode, setMode, notice, chosen, amounts, total, items, checkBody, edit };
}

/** A payroll run being drafted: its lines, the step it is at, and the calls that prepare and submit it. */
export function usePayrollDraft(employerId: string, employees: Employee[], signsItself: boolean, schedule: PaySchedule | null = null) {
  const navigate = useNavigate();
  const draft = useDraftLines(employerId, employees, schedule);
  const [step, setStep] = useState(0);
  const [stepError, setStepError] = useState<string | null>(null);
  const [submitError, setSubmitError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [prepared, setPrepared] = useState<PreparedPayrollRun | null>(null);
  const [decision, setDecision] = useState<{ key: string; id: string } | null>(null);
  const [txHash, setTxHash] = useState('');
  const { items, periodStart, periodEnd, payDate } = draft;
  const planKey = JSON.stringify([items, periodStart, periodEnd, payDate]);
  const names = new Map(employees.map((e) => [e.id, e.full_name]));

  /** Moves to `next` with the previous step's failure cleared. */
  const goTo = (next: number) => {
    setSubmitError(null);
    setStep(next);
  };

  const goPreview = (event: FormEvent) => {
    event.preventDefault();
    setStepError(null);
    if (draft.chosen.length === 0) return setStepError('Choose at least one employee to pay.');
    const bad = draft.amounts.find((a) => a.units === null || a.units === 0n);
    if (bad) {
      document.getElementById(`amount-${bad.employee.id}`)?.focus();
      return setStepError(`The amount for ${bad.employee.full_name} must be more than zero, with at most 6 decimal places.`);
    }
    if (periodStart && periodEnd && periodEnd < periodStart) return setStepError('The pay period cannot end before it starts.');
    goTo(1);
  };

  /** Runs `call` with the busy flag, keeping its failure for the step to show. */
  const guarded = async (call: () => Promise<void>) => {
    setBusy(true);
    setSubmitError(null);
    try {
      await call();
    } catch (reason) {
      setSubmitError(reason as Error);
    } finally {
      setBusy(false);
    }
  };

  /** Owner-signed treasuries: prepare the draft and its calldata (the server's pre-flight runs here). */
  const prepare = () =>
    guarded(async () => {
      setPrepared(await api<PreparedPayrollRun>(`/api/employers/${employerId}/payroll`, { method: 'POST', body: draft.checkBody, headers: { 'idempotency-key': newIdempotencyKey() } }));
      setStep(2);
    });

  /** The service's agent wallet executes: record the plan (a decision) once, then execute it. */
  const executeByAgent = async () => {
    let current = decision?.key === planKey ? decision : null;
    if (!current) {
      const made = await api<{ decision_id: string }>(`/api/employers/${employerId}/payroll/decisions`, {
        method: 'POST',
        body: { ...draft.checkBody, items: items.map((i) => ({ ...i, chain: 'tempo' })) },
        headers: { 'idempotency-key': newIdempotencyKey() },
      });
      current = { key: planKey, id: made.decision_id };
      setDecision(current);
    }
    const done = await api<{ payroll_run_id: string }>('/api/x402/payroll/execute', { method: 'POST', body: { employer_id: employerId, decision_id: current.id } });
    navigate(`/dashboard/payroll/${done.payroll_run_id}`);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    return guarded(async () => {
      if (!(signsItself && prepared)) return executeByAgent();
      const run = await api<PayrollRun>(`/api/employers/${employerId}/payroll/${prepared.payroll_run_id}/submit`, { method: 'POST', body: { tx_hash: txHash.trim() } });
      navigate(`/dashboard/payroll/${run.id}`);
    });
  };

  return { ...draft, names, step, setStep, goTo, stepError, submitError, busy, prepared, txHash, setTxHash, goPreview, prepare, submit };
}

export type PayrollDraft = ReturnType<typeof usePayrollDraft>;
