import { createHash } from 'node:crypto';

/**
 * The consent page of GET /api/oauth/authorize, and the page shown when a request cannot be
 * answered by a redirect. Self-contained HTML: one static script and one static style sheet,
 * allowed by their SHA-256 hashes in a strict Content-Security-Policy (nothing else may run or
 * load; `connect-src 'self'` for the two calls the script makes; no framing).
 *
 * The script gets the signed-in user's identity-provider bearer (local mode: "sign in as" through
 * POST /api/dev/token; live mode: a token pasted from the identity provider), then posts the
 * approval to POST /api/oauth/authorize/decision and follows the `redirect_to` it answers.
 * "Deny" needs no sign-in: it links straight to the client's redirect URI with `access_denied`.
 */

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 10px; padding: 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
h1 { font-size: 1.3rem; margin-top: 0; }
dt { font-weight: 600; margin-top: .6rem; }
dd { margin: 0; word-break: break-all; }
.note { color: #5a6275; font-size: .9rem; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input[type=text], textarea { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #c4c8d2; border-radius: 6px; }
.actions { display: flex; gap: .8rem; margin-top: 1.5rem; }
button { font: inherit; padding: .6rem 1.4rem; border-radius: 6px; border: 1px solid #1d2330; cursor: pointer; }
#approve { background: #1d2330; color: #fff; }
#deny { background: #fff; color: #1d2330; }
#status { color: #b3261e; min-height: 1.5rem; }
`;

const SCRIPT = `
(function () {
  var form = document.getElementById('consent');
  var status = document.getElementById('status');
  var buttons = form.querySelectorAll('button');
  function busy(on) { for (var i = 0; i < buttons.length; i++) buttons[i].disabled = on; }
  function params() {
    var out = {};
    var inputs = form.querySelectorAll('input[type=hidden]');
    for (var i = 0; i < inputs.length; i++) out[inputs[i].name] = inputs[i].value;
    return out;
  }
  async function bearer() {
    var signInAs = document.getElementById('sign_in_as');
    if (signInAs) {
      var sub = signInAs.value.trim();
      if (!sub) throw new Error('Enter the user id to sign in as.');
      var res = await fetch('/api/dev/token', {
        method: 'POST', credentials: 'omit',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ sub: sub })
      });
      if (!res.ok) throw new Error('Sign-in failed (HTTP ' + res.status + ').');
      return (await res.json()).token;
    }
    var pasted = document.getElementById('identity_token').value.trim();
    if (!pasted) throw new Error('Sign in first: paste the token from your identity provider.');
    return pasted;
  }
  async function approve() {
    var token = await bearer();
    var body = params();
    body.approve = true;
    var res = await fetch('/api/oauth/authorize/decision', {
      method: 'POST', credentials: 'omit',
      headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + token },
      body: JSON.stringify(body)
    });
    var answer = await res.json().catch(function () { return {}; });
    if (!res.ok || typeof answer.redirect_to !== 'string') {
      throw new Error(answer.error || ('The decision was not accepted (HTTP ' + res.status + ').'));
    }
    window.location.assign(answer.redirect_to);
  }
  form.addEventListener('submit', function (event) { event.preventDefault(); });
  document.getElementById('approve').addEventListener('click', function () {
    status.textContent = '';
    busy(true);
    approve().catch(function (error) { status.textContent = error.message; busy(false); });
  });
  document.getElementById('deny').addEventListener('click', function () {
    busy(true);
    window.location.assign(form.getAttribute('data-deny-url'));
  });
})();
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const SCRIPT_HASH = hash(SCRIPT);
const STYLE_HASH = hash(STYLE);

/** Headers for both pages: no caching, no framing, no referrer (the URL carries `state`). */
function pageHeaders(withScript: boolean): Record<string, string> {
  const csp = [
    "default-src 'none'",
    withScript ? `script-src ${SCRIPT_HASH}` : "script-src 'none'",
    `style-src ${STYLE_HASH}`,
    withScript ? "connect-src 'self'" : "connect-src 'none'",
    "img-src 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function htmlDocument(title: string, body: string, withScript: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
${withScript ? `<script>${SCRIPT}</script>` : ''}
</body>
</html>
`;
}

export interface ConsentPageInput {
  clientId: string;
  clientName: string | null;
  redirectUri: string;
  scope: string;
  /** The authorization request's parameters, sent back with the decision. */
  params: Record<string, string | undefined>;
  denyUrl: string;
  /** Local mode: sign in as any user id through POST /api/dev/token. */
  devSignIn: boolean;
  /** Live mode: the identity provider's issuer, shown (and linked when it is an https URL). */
  identityProviderIssuer: string;
}

export function consentPage(input: ConsentPageInput): { html: string; headers: Record<string, string> } {
  const name = input.clientName ?? 'An unnamed application';
  const redirectHost = new URL(input.redirectUri).host;
  const hidden = Object.entries(input.params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const issuer = input.identityProviderIssuer;
  const issuerText = /^https:\/\//.test(issuer)
    ? `<a href="${escapeHtml(issuer)}" target="_blank" rel="noopener noreferrer">${escapeHtml(issuer)}</a>`
    : escapeHtml(issuer);
  const signIn = input.devSignIn
    ? `<label for="sign_in_as">Sign in as (local mode)</label>
<input type="text" id="sign_in_as" value="demo-owner" autocomplete="off" spellcheck="false">
<p class="note">Local mode: any user id; the development identity provider signs the token.</p>`
    : `<label for="identity_token">Your identity-provider token</label>
<textarea id="identity_token" rows="3" autocomplete="off" spellcheck="false"></textarea>
<p class="note">Sign in with your identity provider (${issuerText}) and paste the bearer token it gives you.</p>`;
  const body = `<h1>Allow ${escapeHtml(name)} to use your account?</h1>
<p><strong>${escapeHtml(name)}</strong> wants to call this service's MCP tools on your behalf. Paid tools still need a payment for each call.</p>
<dl>
<dt>Application</dt><dd>${escapeHtml(name)} <span class="note">(name given by the application itself; client id ${escapeHtml(input.clientId)})</span></dd>
<dt>Sends you back to</dt><dd>${escapeHtml(redirectHost)} <span class="note">(${escapeHtml(input.redirectUri)})</span></dd>
<dt>Access</dt><dd>${escapeHtml(input.scope)}: call the MCP tools as you. Access tokens last one hour; the application may renew them while it keeps using them (at most 30 days between uses).</dd>
</dl>
<form id="consent" data-deny-url="${escapeHtml(input.denyUrl)}">
${hidden}
${signIn}
<div class="actions"><button type="button" id="approve">Approve</button><button type="button" id="deny">Deny</button></div>
<p id="status" role="alert"></p>
</form>
<noscript><p>This page needs JavaScript to send your decision.</p></noscript>`;
  return { html: htmlDocument(`Authorize ${name}`, body, true), headers: pageHeaders(true) };
}

/** A request that cannot go back to the client (unknown client or redirect URI): told to the user only. */
export function errorPage(error: string, description: string): { html: string; headers: Record<string, string> } {
  const body = `<h1>This authorization request cannot be completed</h1>
<p>${escapeHtml(description)}</p>
<p class="note">Error: ${escapeHtml(error)}. Nothing was sent to the application; return to it and try again.</p>`;
  return { html: htmlDocument('Authorization error', body, false), headers: pageHeaders(false) };
}
