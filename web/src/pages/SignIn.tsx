import { useEffect, useState, type FormEvent } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { useApi } from '../hooks';
import { homeOf, useSession } from '../session';
import { usePageTitle } from '../company';
import { checkFields, rules } from '../lib/form';

/** The dev token's `sub` (DevTokenRequest) and a pasted token, in the server's words. */
const USER_ID = { label: 'User id', rules: [rules.required, rules.maxLength(255)] };
const TOKEN = { label: 'Token', rules: [rules.required] };

/** A field's problem under it, tied to the input by `aria-describedby`. */
function FieldProblem({ id, problem }: { id: string; problem: string | undefined }) {
  return problem ? (
    <p id={id} className="field-error" role="alert">
      {problem}
    </p>
  ) : null;
}

/** A token the identity provider's hosted login sent back in the URL fragment. */
function tokenFromFragment(): string | null {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  return fragment.get('id_token') ?? fragment.get('access_token') ?? fragment.get('token');
}

const DEMO_USERS = [
  { sub: 'demo-owner', label: 'Demo employer owner', email: 'owner@demo-payroll.example' },
  { sub: 'demo-employee', label: 'Demo employee', email: 'ada@demo-payroll.example' },
  { sub: 'demo-admin', label: 'Platform admin', email: 'admin@demo-payroll.example' },
];

/**
 * Local mode: "sign in as" through the development identity provider (POST /api/dev/token).
 * Live mode: the identity provider's hosted login (IDP_LOGIN_URL), which comes back here with the
 * token in the fragment; or a token pasted by hand.
 */
export function SignIn() {
  usePageTitle('Sign in');
  const { session, signIn } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const options = useApi<{ dev_sign_in: boolean; login_url: string | null }>('/api/auth/options');

  useEffect(() => {
    const returned = tokenFromFragment();
    if (!returned) return;
    window.history.replaceState(null, '', window.location.pathname); // the token leaves the address bar
    signIn(returned)
      .then((current) => navigate(homeOf(current)))
      .catch((reason: unknown) => setError((reason as Error).message));
  }, [signIn, navigate]);

  if (session) return <Navigate to={homeOf(session)} replace />;
  const hostedLogin = options.data?.login_url
    ? `${options.data.login_url}${options.data.login_url.includes('?') ? '&' : '?'}redirect_uri=${encodeURIComponent(`${window.location.origin}/signin`)}`
    : null;

  const signInAs = async (sub: string, email?: string) => {
    setBusy(true);
    setError(null);
    try {
      const response = await fetch('/api/dev/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(email ? { sub, email } : { sub }),
      });
      if (!response.ok) throw new Error(response.status === 404 ? 'Development sign-in is only available in local mode.' : `Sign-in failed (${response.status}).`);
      const { token: issued } = (await response.json()) as { token: string };
      navigate(homeOf(await signIn(issued)));
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const submitToken = async (token: string) => {
    try {
      navigate(homeOf(await signIn(token)));
    } catch (reason) {
      setError((reason as Error).message);
    }
  };

  return (
    <main id="main" className="signin">
      <h1>Sign in</h1>
      {error && (
        <p className="state-error" role="alert">
          {error}
        </p>
      )}
      {hostedLogin && (
        <section aria-labelledby="idp-heading" className="card">
          <h2 id="idp-heading">Your account</h2>
          <a className="button" href={hostedLogin}>
            Sign in with your identity provider
          </a>
        </section>
      )}
      {options.data?.dev_sign_in !== false && (
      <section aria-labelledby="demo-heading" className="card">
        <h2 id="demo-heading">Sign in as (local mode)</h2>
        <div className="stack">
          {DEMO_USERS.map((user) => (
            <button key={user.sub} type="button" className="button" disabled={busy} onClick={() => void signInAs(user.sub, user.email)}>
              {user.label}
            </button>
          ))}
        </div>
        <CustomUserForm busy={busy} onUser={(sub) => void signInAs(sub)} />
      </section>
      )}
      <TokenForm onToken={(token) => void submitToken(token)} />
    </main>
  );
}

/** Local mode: sign in as any user id. */
function CustomUserForm({ busy, onUser }: { busy: boolean; onUser: (sub: string) => void }) {
  const [custom, setCustom] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  return (
    <form
      className="inline-form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const found = checkFields({ sub: custom }, { sub: USER_ID }).sub;
        setProblem(found);
        if (!found) onUser(custom.trim());
      }}
    >
      <label htmlFor="custom-user">Another user id</label>
      <input
        id="custom-user"
        value={custom}
        onChange={(e) => setCustom(e.target.value)}
        autoComplete="username"
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? 'custom-user-error' : undefined}
      />
      <button type="submit" className="button secondary" disabled={busy}>
        Sign in
      </button>
      <FieldProblem id="custom-user-error" problem={problem} />
    </form>
  );
}

/** A token from the identity provider's own sign-in, pasted by hand. */
function TokenForm({ onToken }: { onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = checkFields({ token }, { token: TOKEN }).token;
    setProblem(found);
    if (!found) onToken(token.trim());
  };
  return (
    <section aria-labelledby="token-heading" className="card">
      <h2 id="token-heading">Identity provider token</h2>
      <form className="inline-form" onSubmit={submit} noValidate>
        <label htmlFor="idp-token">Token from your identity provider's sign-in</label>
        <input
          id="idp-token"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          autoComplete="off"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'idp-token-error' : undefined}
        />
        <button type="submit" className="button secondary">
          Continue
        </button>
        <FieldProblem id="idp-token-error" problem={problem} />
      </form>
    </section>
  );
}
