import type { ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { usePageTitle } from './company';
import { Shell, ShellSkeleton, type NavItem } from './components/Shell';
import { AdminAnnouncements } from './pages/admin/AdminAnnouncements';
import { AdminHome } from './pages/admin/AdminHome';
import { Agents } from './pages/dashboard/Agents';
import { ApiAccess } from './pages/dashboard/ApiAccess';
import { Billing } from './pages/dashboard/Billing';
import { Cards } from './pages/dashboard/Cards';
import { Compliance } from './pages/dashboard/Compliance';
import { Demo } from './pages/dashboard/Demo';
import { DepositAddresses } from './pages/dashboard/DepositAddresses';
import { Overview } from './pages/dashboard/Overview';
import { Payroll } from './pages/dashboard/Payroll';
import { PayrollNew } from './pages/dashboard/PayrollNew';
import { PayrollRun, PayrollRunPayslip } from './pages/dashboard/PayrollRun';
import { Settings } from './pages/dashboard/Settings';
import { Team } from './pages/dashboard/Team';
import { TeamAdd } from './pages/dashboard/TeamAdd';
import { TeamMember } from './pages/dashboard/TeamMember';
import { Treasury } from './pages/dashboard/Treasury';
import { TreasuryDeposit } from './pages/dashboard/TreasuryDeposit';
import { Portal } from './pages/portal/Portal';
import { PortalActivity } from './pages/portal/PortalActivity';
import { PortalPayslip, PortalPayslips } from './pages/portal/PortalPayslips';
import { SignIn } from './pages/SignIn';
import { homeOf, useSession } from './session';

const DASHBOARD_NAV: NavItem[] = [
  { to: '/dashboard', label: 'Overview', end: true },
  { to: '/dashboard/team', label: 'Team' },
  { to: '/dashboard/payroll', label: 'Payroll' },
  { to: '/dashboard/treasury', label: 'Treasury' },
  { to: '/dashboard/cards', label: 'Cards' },
  { to: '/dashboard/compliance', label: 'Compliance' },
  { to: '/dashboard/api-access', label: 'API access' },
  { to: '/dashboard/settings', label: 'Settings' },
  { to: '/dashboard/demo', label: 'Demo agent' },
];
const ADMIN_NAV: NavItem[] = [
  { to: '/admin', label: 'Operations', end: true },
  { to: '/admin/announcements', label: 'Announcements' },
];
const PORTAL_NAV: NavItem[] = [
  { to: '/portal', label: 'My pay', end: true },
  { to: '/portal/activity', label: 'Activity' },
  { to: '/portal/payslips', label: 'Payslips' },
];

/**
 * Signed-in pages; anyone else goes to /signin and comes back afterwards. In the employer's area,
 * an employee who owns no employer is sent to their portal (no employer menus, no "Create your company").
 */
function RequireSession({ children, employerArea = false }: { children: ReactNode; employerArea?: boolean }) {
  const { session, loading } = useSession();
  const location = useLocation();
  if (loading) return <ShellSkeleton />;
  if (!session) return <Navigate to="/signin" replace state={{ from: location.pathname }} />;
  if (employerArea && !session.owned_employer_id && session.employee_ids.length > 0) return <Navigate to="/portal" replace />;
  return <>{children}</>;
}

function Home() {
  const { session, loading } = useSession();
  if (loading) return <ShellSkeleton />;
  return <Navigate to={session ? homeOf(session) : '/signin'} replace />;
}

function NotFound() {
  usePageTitle('Page not found');
  return (
    <main id="main" className="signin">
      <h1>Page not found</h1>
      <p>
        <a href="/">Back to the start</a>
      </p>
    </main>
  );
}

export function App() {
  return (
    <Routes>
      <Route path="/" element={<Home />} />
      <Route path="/signin" element={<SignIn />} />
      <Route
        path="/dashboard"
        element={
          <RequireSession employerArea>
            <Shell nav={DASHBOARD_NAV} title="Employer" showCompany />
          </RequireSession>
        }
      >
        <Route index element={<Overview />} />
        <Route path="team" element={<Team />} />
        <Route path="team/add" element={<TeamAdd />} />
        <Route path="team/:employeeId" element={<TeamMember />} />
        <Route path="payroll" element={<Payroll />} />
        <Route path="payroll/new" element={<PayrollNew />} />
        <Route path="payroll/:runId" element={<PayrollRun />} />
        <Route path="payroll/:runId/payslips/:employeeId" element={<PayrollRunPayslip />} />
        <Route path="treasury" element={<Treasury />} />
        <Route path="treasury/deposit" element={<TreasuryDeposit />} />
        <Route path="cards" element={<Cards />} />
        <Route path="compliance" element={<Compliance />} />
        <Route path="api-access" element={<ApiAccess />} />
        <Route path="settings" element={<Settings />} />
        <Route path="settings/billing" element={<Billing />} />
        <Route path="settings/agents" element={<Agents />} />
        <Route path="settings/deposit-addresses" element={<DepositAddresses />} />
        <Route path="demo" element={<Demo />} />
      </Route>
      <Route
        path="/admin"
        element={
          <RequireSession>
            <Shell nav={ADMIN_NAV} title="Admin" />
          </RequireSession>
        }
      >
        <Route index element={<AdminHome />} />
        <Route path="announcements" element={<AdminAnnouncements />} />
      </Route>
      <Route
        path="/portal"
        element={
          <RequireSession>
            <Shell nav={PORTAL_NAV} title="My pay" />
          </RequireSession>
        }
      >
        <Route index element={<Portal />} />
        <Route path="activity" element={<PortalActivity />} />
        <Route path="payslips" element={<PortalPayslips />} />
        <Route path="payslips/:runId" element={<PortalPayslip />} />
      </Route>
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}
