import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escrows } from '../../src/features/escrow/tables.js';
import { DeliverableFetchError, fetchDeliverable, type DeliverableFetchErrorCode, type ResolvedAddress } from '../../src/features/escrow/fetch-deliverable.js';
import { TreasuryService } from '../../src/features/treasury/service.js';
import { agentProofHeaders } from '../support/agents.js';
import { startTestApp } from '../support/app.js';
import { serveOnLoopback } from '../support/http.js';
import { railA } from '../support/pay.js';
import { reportFigure } from './figures.js';
import { openPublicInternet, PUBLIC_V4, PUBLIC_V6, tableResolver, v4, v6, type PublicInternet } from './support/ssrf-network.js';

/**
 * Issue 12, SSRF: a corpus of hostile deliverable URIs through the real fetcher
 * (src/features/escrow/fetch-deliverable.ts) with the product's defaults (no allowlisted host).
 * DNS is a fixed table (tableResolver) and the "public internet" is one loopback TLS server
 * (openPublicInternet), so redirects come from a public-looking https origin and nothing leaves
 * the machine. A case counts as refused only when the fetcher threw the expected refusal and opened
 * no connection except to the public redirector. Public controls prove it is not refusing everything.
 */

const REDIRECTOR = 'redirect.public.example';
const GATEWAY = 'https://gateway.public.example/ipfs/';
const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;

/** What names resolve to. Private answers model internal DNS, rebinding services and metadata names. */
const DNS: Record<string, ResolvedAddress[]> = {
  '*.public.example': [v4(PUBLIC_V4)],
  localhost: [v4('127.0.0.1'), v6('::1')],
  'localhost.': [v4('127.0.0.1')],
  '*.localhost': [v4('127.0.0.1'), v6('::1')],
  'localtest.me': [v4('127.0.0.1')],
  '*.localtest.me': [v4('127.0.0.1')],
  '10.0.0.1.nip.io': [v4('10.0.0.1')],
  '169.254.169.254.nip.io': [v4('169.254.169.254')],
  '7f000001.rbndr.example': [v4('127.0.0.1')],
  'metadata.google.internal': [v4('169.254.169.254')],
  'metadata.google.internal.': [v4('169.254.169.254')],
  metadata: [v4('169.254.169.254')],
  'instance-data.ec2.internal': [v4('169.254.169.254'), v6('fd00:ec2::254')],
  'metadata.azure.internal': [v4('169.254.169.254')],
  'internal.corp.example': [v4('10.1.2.3')],
  'db.corp.example': [v4('172.20.0.5')],
  'router.home.example': [v4('192.168.1.1')],
  'cgnat.example': [v4('100.64.0.1')],
  'zero.example': [v4('0.0.0.0')],
  'bench.example': [v4('198.18.0.1')],
  'mdns.example': [v4('224.0.0.251')],
  'ula.example': [v6('fd00::1')],
  'linklocal-zone.example': [v6('fe80::1%eth0')],
  'mapped.example': [v6('::ffff:10.0.0.1')],
  'mapped-hex.example': [v6('::ffff:a9fe:a9fe')],
  'nat64.example': [v6('64:ff9b::a9fe:a9fe')],
  'sixtofour.example': [v6('2002:c0a8:101::1')],
  'teredo.example': [v6('2001:0:4136:e378:8000:63bf:3fff:fdd2')],
  'loopback6.example': [v6('::1')],
  'mixed.example': [v4(PUBLIC_V4), v4('10.0.0.1')],
  'mixed-reversed.example': [v4('192.168.0.10'), v4(PUBLIC_V4)],
  'mixed-v6.example': [v6(PUBLIC_V6), v6('::1')],
  'mixed-family.example': [v6(PUBLIC_V6), v4('169.254.169.254')],
};

interface HostileCase {
  category: string;
  uri: string;
  /** The refusal expected (default FORBIDDEN_ADDRESS). */
  code?: DeliverableFetchErrorCode;
  /** Requests the public redirector must have served before the refusal (default 0). */
  hops?: number;
}

const literal = (category: string, hosts: string[], path = '/deliverable.txt'): HostileCase[] => hosts.map((host) => ({ category, uri: `https://${host}${path}` }));

const redirect = (to: string, status: number = 302) => `https://${REDIRECTOR}/redirect?to=${encodeURIComponent(to)}&status=${status}`;

function corpus(): HostileCase[] {
  const cases: HostileCase[] = [
    ...literal('loopback v4', ['127.0.0.1', '127.0.0.2', '127.1.2.3', '127.255.255.254', '127.1', '2130706433', '0x7f000001', '0x7f.1', '0177.0.0.1', '017700000001', '0x7f.0x0.0x0.0x1', '127.000.000.001', '0177.1', '１２７.０.０.１', '127。0。0。1', '%31%32%37.0.0.1', '127.0.0.1.']),
    ...literal('unspecified', ['0.0.0.0', '0', '0.1.2.3', '[::]', '[0:0:0:0:0:0:0:0]']),
    ...literal('private v4', ['10.0.0.1', '10.255.255.255', '10.1', '167772161', '0x0a.1', '172.16.0.1', '172.31.255.255', '0xac100001', '192.168.0.1', '192.168.255.255', '192.168.1', '3232235521']),
    ...literal('reserved v4', ['100.64.0.1', '100.127.255.254', '198.18.0.1', '198.19.255.254', '192.0.0.1', '192.0.2.1', '192.88.99.1', '198.51.100.1', '203.0.113.1', '240.0.0.1', '250.1.2.3', '255.255.255.255', '224.0.0.1', '239.255.255.250']),
    ...literal('cloud metadata', ['169.254.169.254', '2852039166', '0xa9fea9fe', '0xa9.0xfe.0xa9.0xfe', '0251.0376.0251.0376', '169.254.43518', '[fd00:ec2::254]', '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]', '[64:ff9b::a9fe:a9fe]'], '/latest/meta-data/iam/security-credentials/'),
    ...literal('link-local', ['169.254.0.1', '169.254.255.254', '[fe80::1]', '[febf:ffff::1]']),
    ...literal('IPv6 special', [
      '[::1]',
      '[0:0:0:0:0:0:0:1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[0:0:0:0:0:ffff:127.0.0.1]',
      '[::ffff:10.0.0.1]',
      '[::ffff:0:127.0.0.1]', // IPv4-translated (SIIT)
      '[::127.0.0.1]', // IPv4-compatible (deprecated)
      '[::10.0.0.1]',
      '[64:ff9b::127.0.0.1]', // NAT64
      '[64:ff9b::a00:1]',
      '[64:ff9b:1::a00:1]', // local-use NAT64
      '[2002:7f00:1::1]', // 6to4 of 127.0.0.1
      '[2002:a9fe:a9fe::1]',
      '[2002:c0a8:101::1]',
      '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', // Teredo
      '[2001::1]',
      '[2001:db8::1]',
      '[fc00::1]',
      '[fd12:3456:789a::1]',
      '[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]',
      '[fec0::1]',
      '[ff02::1]',
      '[ff05::2]',
      '[100::1]', // discard-only
    ]),
    // Userinfo, fragments, backslashes and encodings that try to make a parser see another host.
    { category: 'URL tricks', uri: 'https://files.public.example@127.0.0.1/', code: 'INVALID_URI' },
    { category: 'URL tricks', uri: 'https://user:pass@files.public.example/', code: 'INVALID_URI' },
    { category: 'URL tricks', uri: 'https://127.0.0.1#@files.public.example/' },
    { category: 'URL tricks', uri: 'https://127.0.0.1\\@files.public.example/' },
    { category: 'URL tricks', uri: 'https://127.0.0.1%2f@files.public.example/', code: 'INVALID_URI' },
    { category: 'URL tricks', uri: 'https://[fe80::1%25eth0]/', code: 'INVALID_URI' },
    { category: 'URL tricks', uri: 'https://[::1%25lo]/', code: 'INVALID_URI' },
    { category: 'URL tricks', uri: 'https:\\\\127.0.0.1\\x' },
    { category: 'URL tricks', uri: 'https:/127.0.0.1/x' },
    { category: 'URL tricks', uri: 'HTTPS://LOCALHOST/x' },
    { category: 'URL tricks', uri: ' https://127.0.0.1/x ' },
    { category: 'URL tricks', uri: 'https://127.0.0.1:443@files.public.example/', code: 'INVALID_URI' },
    // Names that resolve to forbidden addresses (the fixed DNS table above).
    ...[
      'localhost',
      'localhost.',
      'admin.localhost',
      'localtest.me',
      'app.localtest.me',
      '10.0.0.1.nip.io',
      '169.254.169.254.nip.io',
      '7f000001.rbndr.example',
      'metadata.google.internal',
      'metadata.google.internal.',
      'metadata',
      'instance-data.ec2.internal',
      'metadata.azure.internal',
      'internal.corp.example',
      'db.corp.example',
      'router.home.example',
      'cgnat.example',
      'zero.example',
      'bench.example',
      'mdns.example',
      'ula.example',
      'linklocal-zone.example',
      'mapped.example',
      'mapped-hex.example',
      'nat64.example',
      'sixtofour.example',
      'teredo.example',
      'loopback6.example',
      'mixed.example',
      'mixed-reversed.example',
      'mixed-v6.example',
      'mixed-family.example',
    ].map((name): HostileCase => ({ category: 'DNS -> private', uri: `https://${name}/deliverable.txt` })),
    // Schemes other than https (plain http is only for allowlisted hosts, and production has none).
    ...[
      'file:///etc/passwd',
      'file://localhost/etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
      'ftp://127.0.0.1/secret',
      'dict://127.0.0.1:11211/stats',
      'ldap://127.0.0.1/',
      'sftp://127.0.0.1/',
      'tftp://127.0.0.1/x',
      'javascript:alert(1)',
      'ws://127.0.0.1/',
      'wss://files.public.example/',
      'jar:https://files.public.example/x.jar!/',
      'http://127.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://files.public.example/report.txt',
      'http://[::1]:8080/',
    ].map((uri): HostileCase => ({ category: 'schemes', uri, code: 'UNSUPPORTED_SCHEME' })),
    { category: 'schemes', uri: 'ipfs://127.0.0.1/x', code: 'INVALID_URI' },
    ...literal('ports', ['127.0.0.1:22', '127.0.0.1:6379', '127.0.0.1:8080', '[::1]:5432', '10.0.0.1:25', '169.254.169.254:80', '0.0.0.0:9200', 'localhost:2375']),
  ];

  // Redirects from a public https origin to each forbidden target, cycling through every redirect status.
  const redirectTargets: [string, DeliverableFetchErrorCode?][] = [
    ['https://127.0.0.1/'],
    ['https://127.1/'],
    ['https://2130706433/'],
    ['https://0x7f000001/'],
    ['https://[::1]/'],
    ['https://[::ffff:127.0.0.1]/'],
    ['https://0.0.0.0/'],
    ['https://10.0.0.1/'],
    ['https://172.16.0.1/'],
    ['https://192.168.1.1/'],
    ['https://100.64.0.1/'],
    ['https://169.254.169.254/latest/meta-data/'],
    ['https://[fd00:ec2::254]/latest/meta-data/'],
    ['https://[fe80::1]/'],
    ['https://[fc00::1]/'],
    ['https://[64:ff9b::7f00:1]/'],
    ['https://[2002:7f00:1::1]/'],
    ['https://198.18.0.1/'],
    ['https://224.0.0.1/'],
    ['https://255.255.255.255/'],
    ['https://240.0.0.1/'],
    ['https://localhost/'],
    ['https://metadata.google.internal/computeMetadata/v1/'],
    ['https://internal.corp.example/'],
    ['https://mixed.example/'],
    ['//127.0.0.1/protocol-relative'],
    ['https://files.public.example@127.0.0.1/', 'INVALID_URI'],
    ['http://files.public.example/downgrade', 'UNSUPPORTED_SCHEME'],
    ['http://127.0.0.1/', 'UNSUPPORTED_SCHEME'],
    ['file:///etc/passwd', 'UNSUPPORTED_SCHEME'],
    ['gopher://127.0.0.1:6379/_INFO', 'UNSUPPORTED_SCHEME'],
    ['ftp://127.0.0.1/', 'UNSUPPORTED_SCHEME'],
    ['data:text/plain,inline', 'UNSUPPORTED_SCHEME'],
    ['ipfs://bafkqaaa', 'UNSUPPORTED_SCHEME'],
    ['javascript:alert(1)', 'UNSUPPORTED_SCHEME'],
  ];
  redirectTargets.forEach(([to, code], index) => {
    const status = REDIRECT_STATUSES[index % REDIRECT_STATUSES.length]!;
    cases.push({ category: 'redirects', uri: redirect(to, status), hops: 1, ...(code && { code }) });
  });

  // Chains: public hops first, then a private target; longer than the limit; a loop.
  cases.push({ category: 'redirect chains', uri: redirect(redirect('https://10.0.0.1/')), hops: 2 });
  cases.push({ category: 'redirect chains', uri: redirect(redirect(redirect('https://169.254.169.254/'), 307), 301), hops: 3 });
  cases.push({ category: 'redirect chains', uri: `https://${REDIRECTOR}/hops?n=0`, code: 'TOO_MANY_REDIRECTS', hops: 4 });
  cases.push({ category: 'redirect chains', uri: redirect(redirect(redirect(redirect('https://files.public.example/too-far')))), code: 'TOO_MANY_REDIRECTS', hops: 4 });
  cases.push({ category: 'redirect chains', uri: `https://${REDIRECTOR}/loop`, code: 'TOO_MANY_REDIRECTS', hops: 4 });
  return cases;
}

interface Outcome {
  refused: boolean;
  detail: string;
}

let internet: PublicInternet;

beforeAll(async () => {
  internet = await openPublicInternet();
});

afterAll(async () => {
  await internet?.close();
});

/** Runs one hostile URI; refused = the expected DeliverableFetchError, no connection but the redirector's, and exactly its hops. */
async function attempt(entry: HostileCase): Promise<Outcome> {
  internet.connections.length = 0;
  internet.requests.length = 0;
  let error: unknown;
  try {
    const fetched = await fetchDeliverable(entry.uri, { ipfsGateway: GATEWAY, resolve: tableResolver(DNS), timeoutMs: 5_000 });
    return { refused: false, detail: `fetched ${fetched.finalUrl}` };
  } catch (caught) {
    error = caught;
  }
  const expected = entry.code ?? 'FORBIDDEN_ADDRESS';
  const elsewhere = internet.connections.filter((c) => c.host !== REDIRECTOR);
  const hops = internet.requests.length;
  const code = error instanceof DeliverableFetchError ? error.code : String(error);
  const refused = code === expected && elsewhere.length === 0 && hops === (entry.hops ?? 0);
  return { refused, detail: `${code} (expected ${expected}), ${hops} redirector requests, connections elsewhere: ${JSON.stringify(elsewhere)}` };
}

describe('SSRF corpus on the deliverable fetcher', () => {
  it('fetches public controls, then refuses every hostile URL without connecting to it', async ({ task }) => {
    // Controls: the same fetcher and DNS reach public addresses, pinned to the address it checked.
    const controls: { name: string; run: () => Promise<void> }[] = [
      {
        name: 'a name resolving to a public IPv4 address',
        run: async () => {
          const result = await fetchDeliverable('https://files.public.example/report.txt', { ipfsGateway: GATEWAY, resolve: tableResolver(DNS) });
          expect(Buffer.from(result.bytes).toString()).toBe('public content from files.public.example/report.txt');
          expect(internet.connections).toEqual([{ host: 'files.public.example', servername: 'files.public.example', addresses: [PUBLIC_V4], tls: true }]);
        },
      },
      {
        name: 'a public IPv4 literal',
        run: async () => {
          const result = await fetchDeliverable(`https://${PUBLIC_V4}/report.txt`, { ipfsGateway: GATEWAY, resolve: tableResolver({}) });
          expect(Buffer.from(result.bytes).toString()).toBe(`public content from ${PUBLIC_V4}/report.txt`);
        },
      },
      {
        name: 'a public IPv6 literal',
        run: async () => {
          const result = await fetchDeliverable(`https://[${PUBLIC_V6}]/report.txt`, { ipfsGateway: GATEWAY, resolve: tableResolver({}) });
          expect(result.finalUrl).toBe(`https://[${PUBLIC_V6}]/report.txt`);
          expect(internet.connections.map((c) => c.host)).toEqual([PUBLIC_V6]);
        },
      },
      {
        name: 'a 307 from one public host to another',
        run: async () => {
          const result = await fetchDeliverable(redirect('https://files.public.example/final.txt', 307), { ipfsGateway: GATEWAY, resolve: tableResolver(DNS) });
          expect(result.finalUrl).toBe('https://files.public.example/final.txt');
          expect(internet.connections.map((c) => c.host)).toEqual([REDIRECTOR, 'files.public.example']);
        },
      },
      {
        name: 'ipfs:// through a public gateway',
        run: async () => {
          const result = await fetchDeliverable('ipfs://bafkreigh2akiscaildc/report.json', { ipfsGateway: GATEWAY, resolve: tableResolver(DNS) });
          expect(Buffer.from(result.bytes).toString()).toBe('public content from gateway.public.example/ipfs/bafkreigh2akiscaildc/report.json');
        },
      },
      {
        name: 'a rebinding name: resolved once, connected to the public answer it checked',
        run: async () => {
          let lookups = 0;
          const rebinding = async () => (lookups++ === 0 ? [v4(PUBLIC_V4)] : [v4('127.0.0.1')]);
          await fetchDeliverable('https://rebind.public.example/x', { ipfsGateway: GATEWAY, resolve: rebinding });
          expect(lookups).toBe(1);
          expect(internet.connections.map((c) => c.addresses)).toEqual([[PUBLIC_V4]]);
        },
      },
    ];
    for (const control of controls) {
      internet.connections.length = 0;
      await control.run().catch((error: unknown) => {
        throw new Error(`public control "${control.name}" failed: ${String(error)}`);
      });
    }

    const cases = corpus();
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const byCategory = new Map<string, { refused: number; total: number }>();
    const accepted: string[] = [];
    for (const entry of cases) {
      const outcome = await attempt(entry);
      const tally = byCategory.get(entry.category) ?? { refused: 0, total: 0 };
      tally.total++;
      if (outcome.refused) tally.refused++;
      else accepted.push(`${entry.uri}: ${outcome.detail}`);
      byCategory.set(entry.category, tally);
    }
    const refused = cases.length - accepted.length;
    const categories = [...byCategory].map(([name, { refused: r, total }]) => (r === total ? `${name} ${total}` : `${name} ${r}/${total}`)).join(', ');
    reportFigure(task, {
      check: 'ssrf',
      summary: `${refused} of ${cases.length} hostile URLs refused before connecting (${categories}); ${controls.length} public controls fetched`,
    });
    expect(accepted, 'hostile URLs not refused as expected').toEqual([]);
  });
});

describe('SSRF through POST /api/mpp/escrow/deliver', () => {
  it('answers 400 DELIVERABLE_URI_REFUSED and leaves the escrow posted', { timeout: 120_000 }, async ({ task }) => {
    // The app with production's fetch settings (no ESCROW_FETCH_ALLOW_HOSTS), paid by a real rail A client.
    const t = await startTestApp({}, { chains: true });
    const server = await serveOnLoopback(t.app.fetch);
    try {
      const { pay } = await railA(t, server.url, '20');
      const owner = await t.token(`ssrf-${randomUUID()}`, 'owner@ssrf.example');
      const employerId = ((await (await t.request('POST', '/api/employers', { token: owner, body: { name: 'SSRF Co' } })).json()) as { id: string }).id;
      const accountId = await new TreasuryService(t.chains!.tempo, t.services.employers).accountId(employerId);
      await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: t.chains!.tempo.serviceAddress, amount: '100' } });
      await t.chains!.tempo.depositToTreasury(accountId, 100_000_000n);
      await t.request('POST', '/api/dev/faucet', { body: { network: t.chains!.solana.network, address: t.chains!.solana.serviceAddress, amount: '100' } });

      const authorization = await t.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
        token: owner,
        body: { label: 'Poster', agent_identifier: `poster-${randomUUID()}`, per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 100 },
      });
      expect(authorization.status).toBe(201);
      const poster = (await authorization.json()) as { agent_identifier: string; hmac_secret: string };
      const { publicKey } = generateKeyPairSync('ed25519');
      const workerWallet = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
      // The worker proves its identifier (an EVM address) on every delivery.
      const workerKey = privateKeyToAccount(generatePrivateKey());
      const worker = workerKey.address.toLowerCase();
      const postBody = JSON.stringify({ employer_id: employerId, worker_wallet_address: workerWallet, worker_agent_identifier: worker, amount_usdc: '1.00', rubric_prompt: 'Write a note.\nmust include: ledger' });
      const proof = await agentProofHeaders(poster.agent_identifier, { hmac: poster.hmac_secret }, { method: 'POST', path: '/api/mpp/escrow/post', body: postBody });
      const posted = await pay('/api/mpp/escrow/post', { method: 'POST', body: postBody, headers: proof });
      expect(posted.status, await posted.clone().text()).toBe(200);
      const escrowId = ((await posted.json()) as { escrow_id: string }).escrow_id;

      // [uri, requests the public redirector serves first]
      const uris: [string, number][] = [
        ['https://169.254.169.254/latest/meta-data/', 0],
        ['https://0x7f000001/', 0],
        ['https://[::ffff:10.0.0.1]/', 0],
        ['https://localhost/', 0],
        ['http://127.0.0.1/', 0],
        ['file:///etc/passwd', 0],
        [`https://${PUBLIC_V4}/redirect?to=${encodeURIComponent('https://169.254.169.254/latest/meta-data/')}&status=302`, 1],
        [`https://${PUBLIC_V4}/redirect?to=${encodeURIComponent('https://[fd00:ec2::254]/')}&status=308`, 1],
      ];
      const refusals: string[] = [];
      for (const [uri, hops] of uris) {
        internet.connections.length = 0;
        internet.requests.length = 0;
        const deliverBody = JSON.stringify({ escrow_id: escrowId, deliverable_uri: uri });
        const workerProof = await agentProofHeaders(worker, { evm: workerKey }, { method: 'POST', path: '/api/mpp/escrow/deliver', body: deliverBody });
        const response = await pay('/api/mpp/escrow/deliver', { method: 'POST', body: deliverBody, headers: workerProof });
        const body = (await response.json()) as { code?: string; reason?: string };
        const elsewhere = internet.connections.filter((c) => c.host !== PUBLIC_V4);
        if (response.status === 400 && body.code === 'DELIVERABLE_URI_REFUSED' && elsewhere.length === 0 && internet.requests.length === hops) refusals.push(body.reason ?? '?');
        else expect.fail(`${uri}: ${response.status} ${JSON.stringify(body)}, ${internet.requests.length} redirector requests, connections elsewhere ${JSON.stringify(elsewhere)}`);
      }
      const [row] = await t.database.db.select().from(escrows).where(eq(escrows.id, escrowId));
      expect(row!.status).toBe('posted');
      expect(row!.deliverableUri).toBeNull();
      reportFigure(task, {
        check: 'ssrf',
        summary: `through POST /api/mpp/escrow/deliver: ${refusals.length} of ${uris.length} hostile URIs (2 via a public redirect) answered 400 DELIVERABLE_URI_REFUSED; the escrow stayed posted`,
      });
      expect(refusals).toHaveLength(uris.length);
    } finally {
      await server.close();
      await t.close();
    }
  });
});
