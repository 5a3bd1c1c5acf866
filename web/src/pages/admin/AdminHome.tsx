import { useSearchParams } from 'react-router';
import { Async, Empty, ErrorState, Loading } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsd } from '../../lib/money';
import { useApi } from '../../hooks';
import { useSession } from '../../session';
import { DataTable, type Column } from '../../components/DataTable';
import { Pager } from '../../components/Pager';
import {
  AUDIT_COLUMNS,
  EMAIL_COLUMNS,
  EMPLOYER_COLUMNS,
  ESCROW_COLUMNS,
  FAILED_JOB_COLUMNS,
  JOB_COLUMNS,
  PAYROLL_RUN_COLUMNS,
  type AdminPage,
  type JobsPage,
  type Overview,
} from './components/scopes';
import { Tabs, type TabDef } from './components/Tabs';
import { usePageTitle } from '../../company';

type TabKey = 'overview' | 'employers' | 'payroll_runs' | 'escrows' | 'jobs' | 'email_outbox' | 'audit_log';

const TABS: TabDef<TabKey>[] = [
  { key: 'overview', label: 'Overview' },
  { key: 'employers', label: 'Employers' },
  { key: 'payroll_runs', label: 'Payroll runs' },
  { key: 'escrows', label: 'Escrows' },
  { key: 'jobs', label: 'Jobs' },
  { key: 'email_outbox', label: 'Email outbox' },
  { key: 'audit_log', label: 'Audit log' },
];
const LIMIT = 25;
const ID_PREFIX = 'admin';

const pageOf = (value: string | null) => {
  const page = Number(value);
  return Number.isInteger(page) && page >= 1 ? page : 1;
};

/** `/admin`: the platform admin's operations view over `GET /api/admin?scope=...`, one tab per scope. */
export function AdminHome() {
  usePageTitle('Operations');
  const { session } = useSession();
  const [params, setParams] = useSearchParams();
  const tab = TABS.find((t) => t.key === params.get('tab'))?.key ?? 'overview';
  const page = pageOf(params.get('page'));
  const failedPage = pageOf(params.get('failed_page'));

  const update = (next: Record<string, string | number | null>) =>
    setParams(
      (current) => {
        const merged = new URLSearchParams(current);
        for (const [key, value] of Object.entries(next)) {
          if (value === null || value === 1) merged.delete(key);
          else merged.set(key, String(value));
        }
        return merged;
      },
      { replace: true },
    );

  if (session && !session.is_platform_admin) {
    return (
      <>
        <h1>Operations</h1>
        <ErrorState error={new Error('This area is for platform admins only.')} />
      </>
    );
  }

  return (
    <>
      <h1>Operations</h1>
      <Tabs
        tabs={TABS}
        selected={tab}
        label="Operations data"
        idPrefix={ID_PREFIX}
        onSelect={(key) => update({ tab: key === 'overview' ? null : key, page: null, failed_page: null })}
      />
      <div role="tabpanel" id={`${ID_PREFIX}-panel-${tab}`} aria-labelledby={`${ID_PREFIX}-tab-${tab}`} className="ap-tabpanel">
        {tab === 'overview' && <OverviewPanel />}
        {tab === 'employers' && (
          <ScopeTable key={tab} scope="employers" title="Employers" columns={EMPLOYER_COLUMNS} empty="No employers yet." page={page} onPage={(p) => update({ page: p })} />
        )}
        {tab === 'payroll_runs' && (
          <ScopeTable key={tab} scope="payroll_runs" title="Payroll runs" columns={PAYROLL_RUN_COLUMNS} empty="No payroll runs yet." page={page} onPage={(p) => update({ page: p })} />
        )}
        {tab === 'escrows' && (
          <ScopeTable key={tab} scope="escrows" title="Escrows" columns={ESCROW_COLUMNS} empty="No escrows yet." page={page} onPage={(p) => update({ page: p })} />
        )}
        {tab === 'jobs' && (
          <>
            <JobsPanel page={page} onPage={(p) => update({ page: p })} />
            <ScopeTable
              key="failed_jobs"
              scope="failed_jobs"
              title="Failed jobs"
              columns={FAILED_JOB_COLUMNS}
              empty="No failed jobs."
              page={failedPage}
              onPage={(p) => update({ failed_page: p })}
            />
          </>
        )}
        {tab === 'email_outbox' && (
          <ScopeTable key={tab} scope="email_outbox" title="Email outbox" columns={EMAIL_COLUMNS} empty="No emails queued or sent yet." page={page} onPage={(p) => update({ page: p })} />
        )}
        {tab === 'audit_log' && (
          <ScopeTable key={tab} scope="audit_log" title="Audit log" columns={AUDIT_COLUMNS} empty="The audit log is empty." page={page} onPage={(p) => update({ page: p })} />
        )}
      </div>
    </>
  );
}

function PanelHead({ title, onRefresh, busy }: { title: string; onRefresh: () => void; busy: boolean }) {
  return (
    <div className="ap-panel-head">
      <h2>{title}</h2>
      <button type="button" className="button secondary" onClick={onRefresh} disabled={busy}>
        {busy ? 'Refreshing…' : 'Refresh'}
      </button>
    </div>
  );
}

function ScopeTable<T extends { id: string }>({
  scope,
  title,
  columns,
  empty,
  page,
  onPage,
}: {
  scope: string;
  title: string;
  columns: Column<T>[];
  empty: string;
  page: number;
  onPage: (page: number) => void;
}) {
  const loaded = useApi<AdminPage<T>>(`/api/admin?scope=${scope}&page=${page}&limit=${LIMIT}`);
  return (
    <section className="ap-section" aria-label={title}>
      <PanelHead title={title} onRefresh={loaded.reload} busy={loaded.loading} />
      <Async loaded={loaded}>
        {(loadedData) =>
          loadedData.available === false ? (
            <Empty>The job runner has not started on this database yet.</Empty>
          ) : (
            <>
              {loadedData.items.length === 0 ? <Empty>{page > 1 ? 'Nothing on this page.' : empty}</Empty> : (
                <DataTable caption={title} columns={columns} rows={loadedData.items} rowKey={(row) => row.id} tools={{ name: title.toLowerCase(), paged: loadedData.total > loadedData.items.length }} />
              )}
              <Pager page={loadedData.page} limit={loadedData.limit} total={loadedData.total} onPage={onPage} label={title} busy={loaded.loading} />
            </>
          )
        }
      </Async>
    </section>
  );
}

function JobsPanel({ page, onPage }: { page: number; onPage: (page: number) => void }) {
  const loaded = useApi<JobsPage>(`/api/admin?scope=jobs&page=${page}&limit=${LIMIT}`);
  const data = loaded.data;
  return (
    <section className="ap-section" aria-label="Jobs">
      <PanelHead title="Jobs" onRefresh={loaded.reload} busy={loaded.loading} />
      {loaded.error ? (
        <ErrorState error={loaded.error} onRetry={loaded.reload} />
      ) : !data ? (
        <Loading />
      ) : data.available === false ? (
        <Empty>The job runner has not started on this database yet.</Empty>
      ) : (
        <>
          <h3>Per queue and state</h3>
          {(data.counts ?? []).length === 0 ? (
            <Empty>No jobs yet.</Empty>
          ) : (
            <DataTable
              caption="Jobs per queue and state"
              columns={[
                { key: 'name', label: 'Queue', render: (r: { name: string; state: string; count: number }) => r.name },
                { key: 'state', label: 'State', render: (r) => r.state },
                { key: 'count', label: 'Jobs', render: (r) => r.count.toLocaleString('en-US'), num: true },
              ]}
              rows={data.counts ?? []}
              rowKey={(r) => `${r.name}:${r.state}`}
            />
          )}
          <h3>Recent jobs</h3>
          {data.items.length === 0 ? <Empty>No jobs on this page.</Empty> : (
            <DataTable caption="Recent jobs" columns={JOB_COLUMNS} rows={data.items} rowKey={(r) => r.id} tools={{ name: 'recent jobs', paged: data.total > data.items.length }} />
          )}
          <Pager page={data.page} limit={data.limit} total={data.total} onPage={onPage} label="Recent jobs" busy={loaded.loading} />
        </>
      )}
    </section>
  );
}

function Counts({ title, counts }: { title: string; counts: Record<string, number> }) {
  return (
    <div className="card">
      <h2>{title}</h2>
      <dl className="ap-counts">
        {Object.entries(counts).map(([state, count]) => (
          <div key={state}>
            <dt>{state.replace(/_/g, ' ')}</dt>
            <dd>{count.toLocaleString('en-US')}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

function OverviewPanel() {
  const loaded = useApi<Overview>('/api/admin?scope=overview');
  if (loaded.error) return <ErrorState error={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data) return <Loading />;
  const { counts, generated_at } = loaded.data;
  return (
    <section className="ap-section" aria-label="Overview">
      <div className="ap-panel-head">
        <h2>Overview</h2>
        <span className="muted">As of {formatDate(generated_at)}</span>
        <button type="button" className="button secondary" onClick={loaded.reload} disabled={loaded.loading}>
          {loaded.loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <div className="grid">
        <div className="card">
          <h2>Employers</h2>
          <p className="stat">{counts.employers.toLocaleString('en-US')}</p>
        </div>
        <Counts title="Employees" counts={counts.employees} />
        <Counts title="Payroll runs" counts={counts.payroll_runs} />
        <Counts title="Emails" counts={counts.emails} />
        <Counts title="Reputation writes" counts={counts.reputation_writes} />
      </div>
      <h3>Paid calls by rail</h3>
      {counts.payments.length === 0 ? (
        <Empty>No paid calls yet.</Empty>
      ) : (
        <DataTable
          caption="Paid calls by rail and status"
          columns={[
            { key: 'rail', label: 'Rail', render: (r: Overview['counts']['payments'][number]) => r.rail },
            { key: 'status', label: 'Status', render: (r) => r.status },
            { key: 'count', label: 'Calls', render: (r) => r.count.toLocaleString('en-US'), num: true },
            { key: 'amount', label: 'Amount', render: (r) => formatUsd(r.amount_usd), num: true },
          ]}
          rows={counts.payments}
          rowKey={(r) => `${r.rail}:${r.status}`}
        />
      )}
    </section>
  );
}
