import { useEmployerId } from '../../session';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import type { Employee, Team } from '../../lib/api';
import type { PaySchedule } from '../../lib/schedule';
import { ErrorState, Loading } from '../../components/States';
import { useApi } from '../../hooks';
import { NeedsEmployer } from './components/CreateCompany';
import { PayrollChooseStep } from './components/PayrollChooseStep';
import { PayrollPreviewStep } from './components/PayrollPreviewStep';
import { PayrollSubmitStep } from './components/PayrollSubmitStep';
import { usePayrollDraft } from './components/usePayrollDraft';
import { useCompany, usePageTitle } from '../../company';

/** /dashboard/payroll/new: choose (or import) → preview with pre-flight checks → submit. */
export function PayrollNew() {
  usePageTitle('New payroll run');
  const employerId = useEmployerId();
  if (!employerId) return <NeedsEmployer title="New payroll run" />;
  return <PayrollNewFor employerId={employerId} />;
}

function PayrollNewFor({ employerId }: { employerId: string }) {
  const team = useApi<Team>(`/api/employers/${employerId}/team?limit=500`);
  const { employer, error: employerError } = useCompany();

  return (
    <>
      <p>
        <Link to="/dashboard/payroll">← Payroll</Link>
      </p>
      <h1>New payroll run</h1>
      {team.error || employerError ? (
        <ErrorState error={(team.error ?? employerError)!} onRetry={team.reload} />
      ) : !team.data || !employer ? (
        <Loading />
      ) : (
        <Wizard
          employerId={employerId}
          employees={team.data.employees}
          signsItself={employer.admin_wallet !== null && employer.id === employerId}
          adminWallet={employer.admin_wallet}
          schedule={employer.pay_schedule}
        />
      )}
    </>
  );
}

const STEPS = ['Choose who is paid', 'Preview and checks', 'Sign and submit'];

interface WizardProps {
  employerId: string;
  employees: Employee[];
  signsItself: boolean;
  adminWallet: string | null;
  schedule: PaySchedule | null;
}

function Wizard({ employerId, employees, signsItself, adminWallet, schedule }: WizardProps) {
  const draft = usePayrollDraft(employerId, employees, signsItself, schedule);
  const { step } = draft;
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    headingRef.current?.focus();
  }, [step]);

  const props = { employerId, employees, signsItself, draft, headingRef };
  return (
    <>
      <ol className="core-steps" aria-label="Steps">
        {STEPS.map((label, i) => (
          <li key={label} aria-current={i === step ? 'step' : undefined} className={i === step ? 'core-step-current' : i < step ? 'core-step-done' : ''}>
            <span className="core-step-number" aria-hidden="true">
              {i + 1}
            </span>{' '}
            {label}
          </li>
        ))}
      </ol>
      {step === 0 && <PayrollChooseStep {...props} />}
      {step === 1 && <PayrollPreviewStep {...props} />}
      {step === 2 && <PayrollSubmitStep {...props} adminWallet={adminWallet} />}
    </>
  );
}
