import { NavLink, Outlet, useNavigate } from 'react-router';
import { useCompany } from '../company';
import { useSession } from '../session';
import { Banners } from './Banners';
import { Bell } from './Bell';

export interface NavItem {
  to: string;
  label: string;
  end?: boolean;
}

/**
 * Every signed-in page: the banners, a header with the areas this user may enter (and, in the
 * employer's area, the company's name), the area's navigation.
 */
export function Shell({ nav, title, showCompany = false }: { nav: NavItem[]; title: string; showCompany?: boolean }) {
  const { session, signOut } = useSession();
  const company = useCompany().employer;
  const navigate = useNavigate();
  if (!session) return null;
  const areas: NavItem[] = [
    ...(session.owned_employer_id ? [{ to: '/dashboard', label: 'Employer' }] : []),
    ...(session.employee_ids.length > 0 ? [{ to: '/portal', label: 'My pay' }] : []),
    ...(session.is_platform_admin ? [{ to: '/admin', label: 'Admin' }] : []),
  ];
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <Banners />
      <header className="topbar">
        <span className="brand">Payroll</span>
        {showCompany && company && (
          <span className="company" title={company.name}>
            {company.name}
          </span>
        )}
        <nav aria-label="Areas" className="areas">
          {areas.map((area) => (
            <NavLink key={area.to} to={area.to}>
              {area.label}
            </NavLink>
          ))}
        </nav>
        <div className="topbar-right">
          {session.owned_employer_id && <Bell employerId={session.owned_employer_id} />}
          <span className="muted user">{session.email ?? session.user_id}</span>
          <button
            type="button"
            className="button secondary"
            onClick={() => {
              signOut();
              navigate('/signin');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <div className="layout">
        <nav aria-label={title} className="sidenav">
          {nav.map((item) => (
            <NavLink key={item.to} to={item.to} end={item.end ?? false}>
              {item.label}
            </NavLink>
          ))}
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}

/** The shell's outline while the session loads: the header and menus appear at once, not a blank page. */
export function ShellSkeleton() {
  return (
    <div className="shell" role="status" aria-label="Loading">
      <header className="topbar">
        <span className="brand">Payroll</span>
        <span className="skeleton skeleton-text" />
        <span className="skeleton skeleton-button topbar-right" />
      </header>
      <div className="layout">
        <div className="sidenav" aria-hidden="true">
          {[0, 1, 2, 3, 4, 5].map((i) => (
            <span key={i} className="skeleton skeleton-nav" />
          ))}
        </div>
        <div className="content" aria-hidden="true">
          <span className="skeleton skeleton-title" />
          <div className="card">
            <span className="skeleton skeleton-text" />
            <span className="skeleton skeleton-block" />
          </div>
        </div>
      </div>
    </div>
  );
}
