import { useEmployerId } from '../../session';
import { ConfirmButton } from '../../components/ConfirmButton';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, type Schema } from '../../lib/api';
import { Async, Empty } from '../../components/States';
import { formatDate } from '../../lib/format';
import { formatUsdExact } from '../../lib/money';
import { useApi } from '../../hooks';
import { CopyButton, errorText, NoEmployer, SecretOnce } from './components/common';
import { pricedRoutes, RAIL_NAMES, unitText, type OpenApiDocument } from './components/openapi';
import { usePageTitle } from '../../company';

type AgentKey = Schema<'AgentKey'>;

/** API access: the agent key (shown once), how to connect an MCP client, and the live price table. */
export function ApiAccess() {
  usePageTitle('API access');
  const employerId = useEmployerId();
  const doc = useApi<OpenApiDocument>('/api/openapi.json');
  return (
    <>
      <h1>API access</h1>
      {employerId ? <AgentKeySection employerId={employerId} /> : <NoEmployer />}
      <section className="card" aria-labelledby="mcp-heading">
        <h2 id="mcp-heading">Connect an MCP client</h2>
        <Async loaded={doc}>{(data) => <McpInstructions doc={data} />}</Async>
      </section>
      <section className="card" aria-labelledby="prices-heading">
        <h2 id="prices-heading">Prices of paid routes</h2>
        <Async loaded={doc}>{(data) => <PriceTable doc={data} />}</Async>
      </section>
    </>
  );
}

function AgentKeySection({ employerId }: { employerId: string }) {
  const [issued, setIssued] = useState<AgentKey | null>(null);
  const [last, setLast] = useState<{ prefix: string; created_at: string; rotated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const generate = async () => {
    setError(null);
    try {
      const key = await api<AgentKey>(`/api/employers/${employerId}/agent-key`, { method: 'POST' });
      setIssued(key);
      setLast({ prefix: key.prefix, created_at: key.created_at, rotated: key.rotated });
    } catch (reason) {
      setError(errorText(reason));
    }
  };

  return (
    <section className="card" aria-labelledby="agent-key-heading">
      <h2 id="agent-key-heading">Agent key</h2>
      <p>
        An agent key lets your own scripts and agents call paid routes for this employer: send it as <code>X-Agent-Key</code> next to the payment. It is stored hashed, so it is shown only once;
        generating a new one stops the earlier key at once.
      </p>
      {issued ? (
        <SecretOnce
          label="New agent key"
          value={issued.agent_key}
          warning={
            <>
              Copy this key now and keep it somewhere safe: it cannot be shown again.{issued.rotated ? ' Your previous key no longer works.' : ''}
            </>
          }
          onDone={() => setIssued(null)}
        />
      ) : (
        <ConfirmButton
          label={last ? 'Rotate agent key' : 'Generate agent key'}
          className="button"
          question="Generate a new agent key? Any key issued before stops working immediately, so update your agents with the new one."
          confirmLabel="Generate key"
          onConfirm={generate}
        />
      )}
      {last && !issued && (
        <p className="muted" role="status">
          Key <code>{last.prefix}…</code> {last.rotated ? 'replaced the previous key' : 'issued'} on {formatDate(last.created_at)}.
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function McpInstructions({ doc }: { doc: OpenApiDocument }) {
  const server = doc['x-mcp-server'];
  if (!server?.url) return <Empty>This server does not advertise an MCP endpoint.</Empty>;
  const mcpUrl = server.url;
  let origin = '';
  try {
    origin = new URL(mcpUrl).origin;
  } catch {
    origin = window.location.origin;
  }
  const resourceMetadata = `${origin}/.well-known/oauth-protected-resource`;
  const authorizationMetadata = `${origin}/.well-known/oauth-authorization-server`;
  const config = JSON.stringify(
    {
      mcpServers: {
        payroll: {
          type: 'http',
          url: mcpUrl,
          headers: { 'X-Agent-Key': '<your agent key, for paid tools>' },
        },
      },
    },
    null,
    2,
  );
  const remoteConfig = JSON.stringify({ mcpServers: { payroll: { command: 'npx', args: ['-y', 'mcp-remote', mcpUrl] } } }, null, 2);
  return (
    <>
      <dl className="more-dl">
        <dt>MCP URL</dt>
        <dd>
          <div className="row">
            <code className="more-break">{mcpUrl}</code>
            <CopyButton text={mcpUrl} label="Copy MCP URL" />
          </div>
        </dd>
        <dt>Transport</dt>
        <dd>{server.transport === 'streamable-http' ? 'Streamable HTTP (stateless, JSON responses)' : (server.transport ?? '—')}</dd>
        <dt>Sign-in</dt>
        <dd>{server.auth === 'oauth2.1' ? 'OAuth 2.1 with PKCE (scope mcp:tools); the client registers itself and opens a consent page' : (server.auth ?? '—')}</dd>
      </dl>
      <h3>OAuth discovery</h3>
      <p>Clients find the authorization server on their own from these documents (the first also comes back in the 401 of an unauthenticated call):</p>
      <ul>
        <li>
          Protected resource: <a href={resourceMetadata}>{resourceMetadata}</a>
        </li>
        <li>
          Authorization server: <a href={authorizationMetadata}>{authorizationMetadata}</a>
        </li>
      </ul>
      <h3>Client configuration</h3>
      <p>For clients that speak streamable HTTP (the header is optional: free tools need only the OAuth sign-in; paid tools also take a payment):</p>
      <pre className="more-code" tabIndex={0} aria-label="MCP client configuration">
        {config}
      </pre>
      <CopyButton text={config} label="Copy configuration" />
      <p>For clients that only start local servers, through the mcp-remote bridge:</p>
      <pre className="more-code" tabIndex={0} aria-label="MCP client configuration through mcp-remote">
        {remoteConfig}
      </pre>
      <CopyButton text={remoteConfig} label="Copy bridge configuration" />
      <p className="muted">
        Agents that pay from your treasury need an authorization first: <Link to="/dashboard/settings/agents">set caps and allowlists on the Agents page</Link>.
      </p>
    </>
  );
}

function PriceTable({ doc }: { doc: OpenApiDocument }) {
  const routes = pricedRoutes(doc);
  if (routes.length === 0) return <Empty>The API document lists no paid routes.</Empty>;
  return (
    <>
      <p className="muted">
        Read live from <a href="/api/openapi.json">the OpenAPI document</a>
        {doc.info?.version ? ` (version ${doc.info.version})` : ''}. Rails: {Object.values(RAIL_NAMES).join('; ')}; card through the card processor where offered.
      </p>
      <div className="table-wrap">
        <table className="more-table">
          <caption className="more-sr">Price of each paid route</caption>
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col">What it does</th>
              <th scope="col" className="num">
                Price
              </th>
              <th scope="col">Rails</th>
            </tr>
          </thead>
          <tbody>
            {routes.map((route) => (
              <tr key={`${route.method} ${route.path}`}>
                <th scope="row" data-label="Route" className="more-mono more-break">
                  {route.method} {route.path}
                </th>
                <td data-label="What it does">{route.summary}</td>
                <td data-label="Price" className="num more-nowrap">
                  {route.currency === 'USD' ? formatUsdExact(route.price) : `${route.price} ${route.currency}`} <span className="muted">{unitText(route.unit)}</span>
                </td>
                <td data-label="Rails">
                  <span className="more-rails">
                    {route.rails.map((rail) => (
                      <abbr key={rail} title={RAIL_NAMES[rail] ?? rail} className="pill">
                        {rail}
                      </abbr>
                    ))}
                    {route.card && (
                      <abbr title={route.card.credit ? `Card: a $${route.card.amount} card credit that later calls draw on` : 'Card (through the card processor)'} className="pill">
                        card
                      </abbr>
                    )}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
