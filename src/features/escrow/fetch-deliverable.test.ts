import { createHash, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DeliverableFetchError, fetchDeliverable, forbiddenAddressReason, type FetchDeliverableOptions, type ResolvedAddress } from './fetch-deliverable.js';

const CAP = 102_400;

/** A throw-away self-signed certificate for files.deliverable.test (test only; expires 2126). */
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqLQ320rw+Ctoh1T0
MJiHF4kptggEdEX4m76IkiI3QBWhRANCAAQDZYeJ52P2lfLJczAWNBc+P8+dDXkn
GqvCpGorvQBYsDzEtYFGxk4fU+/6OWkjly5jt25aGHGqdmgCF/DSLvRv
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBvDCCAWKgAwIBAgIUTgb/wjXVmveXEquerDUR280jllowCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWZmlsZXMuZGVsaXZlcmFibGUudGVzdDAgFw0yNjExMjMxOTEw
NTlaGA8yMTI2MTAzMDE5MTA1OVowITEfMB0GA1UEAwwWZmlsZXMuZGVsaXZlcmFi
bGUudGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABANlh4nnY/aV8slzMBY0
Fz4/z50NeScaq8Kkaiu9AFiwPMS1gUbGTh9T7/o5aSOXLmO3bloYcap2aAIX8NIu
9G+jdjB0MB0GA1UdDgQWBBRlC+e2vJsBi9H3MyQYX9rt0Y0oWjAfBgNVHSMEGDAW
gBRlC+e2vJsBi9H3MyQYX9rt0Y0oWjAPBgNVHRMBAf8EBTADAQH/MCEGA1UdEQQa
MBiCFmZpbGVzLmRlbGl2ZXJhYmxlLnRlc3QwCgYIKoZIzj0EAwIDSAAwRQIgZDQm
EJl/xbH3tQZ/JenMG0umhBPzIz4qSna9MYZN1uoCIQC5foEsiBbzf7PcM4N3dV1J
dS210dTTPlGjt8/SECGsGg==
-----END CERTIFICATE-----
`;
const GATEWAY = 'https://ipfs.io/ipfs/';

// ---------------------------------------------------------------------------------------------
// Loopback servers

interface Served {
  port: number;
  origin: string;
  /** `127.0.0.1:<port>`: the allowlist entry that lets the fetcher reach this server. */
  hostPort: string;
  requests: { url: string; host: string | undefined }[];
  close(): Promise<void>;
}

const openServers: { close(): Promise<void> }[] = [];

function trackSockets(server: net.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, served: Served) => void): Promise<Served> {
  const server = http.createServer();
  const sockets = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const served: Served = {
    port,
    origin: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    served.requests.push({ url: req.url ?? '', host: req.headers.host });
    handler(req, res, served);
  });
  openServers.push(served);
  return served;
}

/** A TCP server that accepts connections and never says anything. */
async function silentServer(): Promise<{ port: number; connections: () => number }> {
  const server = net.createServer();
  const sockets = trackSockets(server);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  openServers.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

afterEach(async () => {
  await Promise.all(openServers.splice(0).map((s) => s.close()));
});

const noDns = async (hostname: string): Promise<ResolvedAddress[]> => {
  throw new Error(`unexpected DNS lookup of ${hostname}`);
};

function options(extra: Partial<FetchDeliverableOptions> = {}): FetchDeliverableOptions {
  return { ipfsGateway: GATEWAY, resolve: noDns, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<DeliverableFetchError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DeliverableFetchError);
    return error as DeliverableFetchError;
  }
  throw new Error('expected the fetch to fail');
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// ---------------------------------------------------------------------------------------------
// The SSRF corpus

/** Every forbidden destination, as a URL host (IP literals in the notations Node's URL normalises). */
const FORBIDDEN_HOSTS = [
  '127.0.0.1',
  '127.1.2.3',
  '[::1]',
  '10.0.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  '169.254.1.1',
  '0.0.0.0',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '[::]',
  '[::ffff:127.0.0.1]',
  '[::ffff:169.254.169.254]',
  '[::ffff:7f00:1]',
  '[fd00:ec2::254]',
  '[fc00::1]',
  '[fe80::1]',
  '[ff02::1]',
  '2130706433', // 127.0.0.1 as one decimal number
  '0x7f.1', // hex + short form
  '0x7f000001',
  '0177.0.0.1', // octal
  '127.1',
  '0xa9fea9fe', // 169.254.169.254 in hex
];

/** Addresses a DNS name might resolve to, each forbidden. */
const FORBIDDEN_ADDRESSES: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
  { address: '10.0.0.1', family: 4 },
  { address: '172.16.0.1', family: 4 },
  { address: '172.31.255.255', family: 4 },
  { address: '192.168.1.1', family: 4 },
  { address: '169.254.169.254', family: 4 },
  { address: '0.0.0.0', family: 4 },
  { address: '100.64.0.1', family: 4 },
  { address: '::', family: 6 },
  { address: '::ffff:127.0.0.1', family: 6 },
  { address: '::ffff:10.0.0.1', family: 6 },
  { address: 'fd00:ec2::254', family: 6 },
  { address: 'fe80::1', family: 6 },
  { address: 'fc00::1', family: 6 },
  { address: '64:ff9b::a9fe:a9fe', family: 6 }, // NAT64 of 169.254.169.254
];

describe('SSRF: IP literals', () => {
  it.each(FORBIDDEN_HOSTS)('refuses https://%s/ before any connection', async (host) => {
    const error = await failure(fetchDeliverable(`https://${host}/deliverable.txt`, options()));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
    expect(error.message).toMatch(/^Refused to fetch the deliverable: \S+ is not a public address \(.+\)\.$/);
  });

  it.each(FORBIDDEN_HOSTS)('refuses http://%s/ too (plain http: is only for allowlisted hosts)', async (host) => {
    const error = await failure(fetchDeliverable(`http://${host}/`, options()));
    expect(error.code).toBe('UNSUPPORTED_SCHEME');
  });

  it('refuses a real loopback server that is not on the allowlist, which never sees a request', async () => {
    const server = await serve((_req, res) => res.end('secret'));
    const error = await failure(fetchDeliverable(`${server.origin}/`, options()));
    expect(error.code).toBe('UNSUPPORTED_SCHEME');
    // Allowlisting another port of the same host does not help.
    const other = await failure(fetchDeliverable(`${server.origin}/`, options({ allowHosts: new Set([`127.0.0.1:${server.port + 1}`]) })));
    expect(other.code).toBe('UNSUPPORTED_SCHEME');
    const tlsAttempt = await failure(fetchDeliverable(`https://127.0.0.1:${server.port}/`, options()));
    expect(tlsAttempt.code).toBe('FORBIDDEN_ADDRESS');
    expect(server.requests).toHaveLength(0);
  });
});

describe('SSRF: DNS names resolving to forbidden addresses', () => {
  it.each(FORBIDDEN_ADDRESSES)('refuses a name resolving to $address', async (answer) => {
    const looked: string[] = [];
    const resolve = async (hostname: string) => {
      looked.push(hostname);
      return [answer];
    };
    const error = await failure(fetchDeliverable('https://deliverables.example.com/work.md', options({ resolve })));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
    expect(error.message).toMatch(/^Refused to fetch the deliverable: deliverables\.example\.com resolves to an address that is not public \(.+\)\.$/);
    expect(error.message).not.toContain(answer.address);
    expect(looked).toEqual(['deliverables.example.com']);
  });

  it('refuses a name with one public and one private address, in either order', async () => {
    for (const answers of [
      [{ address: '93.184.215.14', family: 4 as const }, { address: '10.0.0.1', family: 4 as const }],
      [{ address: '2606:4700::6810:84e5', family: 6 as const }, { address: '169.254.169.254', family: 4 as const }],
      [{ address: '192.168.0.10', family: 4 as const }, { address: '93.184.215.14', family: 4 as const }],
    ]) {
      const error = await failure(fetchDeliverable('https://mixed.example.com/', options({ resolve: async () => answers })));
      expect(error.code).toBe('FORBIDDEN_ADDRESS');
    }
  });

  it('refuses localhost through the real resolver', async () => {
    const error = await failure(fetchDeliverable('https://localhost/', { ipfsGateway: GATEWAY }));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
  });
});

describe('SSRF: redirects', () => {
  async function redirector() {
    return serve((req, res) => {
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      res.writeHead(302, { location: to ?? '/' }).end();
    });
  }

  it.each(FORBIDDEN_HOSTS)('refuses a redirect to https://%s/ at the hop', async (host) => {
    const server = await redirector();
    const target = `https://${host}/latest/meta-data/`;
    const error = await failure(fetchDeliverable(`${server.origin}/?to=${encodeURIComponent(target)}`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
    expect(server.requests).toHaveLength(1);
  });

  it.each(FORBIDDEN_ADDRESSES)('refuses a redirect to a name resolving to $address', async (answer) => {
    const server = await redirector();
    const resolve = async (hostname: string) => (hostname === 'internal.example.com' ? [answer] : noDns(hostname));
    const error = await failure(
      fetchDeliverable(`${server.origin}/?to=${encodeURIComponent('https://internal.example.com/')}`, options({ allowHosts: new Set([server.hostPort]), resolve })),
    );
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
  });

  it('refuses a redirect to another, non-allowlisted loopback server, which never sees a request', async () => {
    const inner = await serve((_req, res) => res.end('internal admin'));
    const server = await redirector();
    for (const to of [`${inner.origin}/admin`, `https://127.0.0.1:${inner.port}/admin`]) {
      const error = await failure(fetchDeliverable(`${server.origin}/?to=${encodeURIComponent(to)}`, options({ allowHosts: new Set([server.hostPort]) })));
      expect(['UNSUPPORTED_SCHEME', 'FORBIDDEN_ADDRESS']).toContain(error.code);
    }
    expect(inner.requests).toHaveLength(0);
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'data:text/plain,inline', 'ipfs://bafkqaaa', 'gopher://example.com/'])(
    'refuses a redirect to %s',
    async (to) => {
      const server = await redirector();
      const error = await failure(fetchDeliverable(`${server.origin}/?to=${encodeURIComponent(to)}`, options({ allowHosts: new Set([server.hostPort]) })));
      expect(error.code).toBe('UNSUPPORTED_SCHEME');
    },
  );

  it('follows a relative redirect on an allowed host and reports the final URL', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/start') res.writeHead(301, { location: '/middle' }).end();
      else if (req.url === '/middle') res.writeHead(307, { location: 'final.txt?v=2' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('the work');
    });
    const result = await fetchDeliverable(`${server.origin}/start`, options({ allowHosts: new Set([server.hostPort]) }));
    expect(Buffer.from(result.bytes).toString()).toBe('the work');
    expect(result.finalUrl).toBe(`${server.origin}/final.txt?v=2`);
    expect(server.requests.map((r) => r.url)).toEqual(['/start', '/middle', '/final.txt?v=2']);
  });

  it('stops after maxRedirects', async () => {
    const server = await serve((req, res) => res.writeHead(302, { location: `/hop${Number((req.url ?? '/hop0').slice(4)) + 1}` }).end());
    const error = await failure(fetchDeliverable(`${server.origin}/hop0`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('TOO_MANY_REDIRECTS');
    expect(server.requests).toHaveLength(4); // the first request and 3 redirects
    const none = await failure(fetchDeliverable(`${server.origin}/hop0`, options({ allowHosts: new Set([server.hostPort]), maxRedirects: 0 })));
    expect(none.code).toBe('TOO_MANY_REDIRECTS');
  });
});

describe('address classification', () => {
  it('accepts public unicast addresses', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '169.253.255.255', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(forbiddenAddressReason(address), address).toBeNull();
    }
  });

  it('names the reason for forbidden addresses', () => {
    expect(forbiddenAddressReason('127.0.0.1')).toBe('loopback');
    expect(forbiddenAddressReason('::1')).toBe('loopback');
    expect(forbiddenAddressReason('169.254.169.254')).toBe('cloud metadata');
    expect(forbiddenAddressReason('fd00:ec2::254')).toBe('cloud metadata');
    expect(forbiddenAddressReason('::ffff:192.168.0.1')).toBe('private (IPv4-mapped)');
    expect(forbiddenAddressReason('::ffff:c0a8:1')).toBe('private (IPv4-mapped)');
    expect(forbiddenAddressReason('100.127.255.255')).toBe('shared (CGNAT)');
    expect(forbiddenAddressReason('2001:db8::1')).toBe('reserved (documentation)');
    expect(forbiddenAddressReason('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toMatch(/Teredo/);
    expect(forbiddenAddressReason('2002:7f00:1::1')).toBe('reserved (6to4)');
    expect(forbiddenAddressReason('::127.0.0.1')).toMatch(/reserved/);
    expect(forbiddenAddressReason('fe80::1%eth0')).toBe('unparseable');
    expect(forbiddenAddressReason('localhost')).toBe('unparseable');
  });
});

// ---------------------------------------------------------------------------------------------
// Pinning: the connection goes to the validated address, TLS checks the hostname

describe('pinning', () => {
  it('connects to the address the resolver returned, resolving once, with the hostname as Host', async () => {
    const server = await serve((_req, res) => res.end('pinned'));
    let lookups = 0;
    // A rebinding resolver: the first answer is the one allowed; any later answer would be another address.
    const resolve = async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 as const }] : [{ address: '10.9.9.9', family: 4 as const }]);
    const result = await fetchDeliverable(`http://deliverable.test:${server.port}/x`, options({ allowHosts: new Set([`deliverable.test:${server.port}`]), resolve }));
    expect(Buffer.from(result.bytes).toString()).toBe('pinned');
    expect(lookups).toBe(1);
    expect(server.requests).toEqual([{ url: '/x', host: `deliverable.test:${server.port}` }]);
  });

  it('sends the hostname as TLS SNI while connecting to the pinned address, and keeps certificate verification on', async () => {
    const seen: string[] = [];
    const context = tls.createSecureContext({ key: TEST_KEY, cert: TEST_CERT });
    const server = tls.createServer({
      key: TEST_KEY,
      cert: TEST_CERT,
      SNICallback: (name, callback) => {
        seen.push(name);
        callback(null, context);
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    openServers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const port = (server.address() as AddressInfo).port;
    const error = await failure(
      fetchDeliverable(`https://files.deliverable.test:${port}/w`, options({ allowHosts: new Set([`files.deliverable.test:${port}`]), resolve: async () => [{ address: '127.0.0.1', family: 4 }] })),
    );
    // The handshake reached the pinned loopback server under the URL's hostname; the client then
    // refused its self-signed certificate (verification is not disabled for allowlisted hosts).
    expect(seen).toEqual(['files.deliverable.test']);
    expect(error.code).toBe('NETWORK');
    expect(error.message).toMatch(/certificate/i);
  });
});

// ---------------------------------------------------------------------------------------------
// Size cap

describe('size cap', () => {
  /** Streams `total` bytes in `chunk`-sized writes every `everyMs`, counting what was written before the client hung up. */
  async function streamer(total: number, chunk: number, everyMs: number, headers: Record<string, string | number> = {}) {
    const stats = { written: 0, closedAfter: -1, closed: Promise.resolve() };
    let markClosed = () => undefined as void;
    stats.closed = new Promise<void>((resolve) => (markClosed = resolve));
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', ...headers });
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => {
        clearTimeout(timer);
        stats.closedAfter = stats.written;
        markClosed();
      });
      const pump = () => {
        if (res.destroyed) return;
        if (stats.written >= total) {
          res.end();
          return;
        }
        const size = Math.min(chunk, total - stats.written);
        stats.written += size;
        const more = res.write(Buffer.alloc(size, 0x61));
        if (more) timer = setTimeout(pump, everyMs);
        else res.once('drain', () => (timer = setTimeout(pump, everyMs)));
      };
      pump();
    });
    return { server, stats };
  }

  it('refuses a 101 KB body sent with Content-Length before reading it', async () => {
    const size = 101 * 1024;
    const { server } = await streamer(size, size, 0, { 'content-length': size });
    const error = await failure(fetchDeliverable(`${server.origin}/big`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('TOO_LARGE');
    expect(error.message).toContain('102400 bytes');
  });

  it('refuses a 101 KB chunked body (no Content-Length)', async () => {
    const { server } = await streamer(101 * 1024, 16 * 1024, 0);
    const error = await failure(fetchDeliverable(`${server.origin}/big`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('TOO_LARGE');
  });

  it('hangs up on a slow 10 MB stream without reading much past the cap', async () => {
    const { server, stats } = await streamer(10 * 1024 * 1024, 8 * 1024, 5);
    const started = Date.now();
    const error = await failure(fetchDeliverable(`${server.origin}/huge`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('TOO_LARGE');
    await stats.closed;
    expect(stats.closedAfter).toBeGreaterThan(CAP);
    expect(stats.closedAfter).toBeLessThan(CAP + 64 * 1024);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('hangs up on a slow 10 MB stream sent in larger writes', async () => {
    const { server, stats } = await streamer(10 * 1024 * 1024, 32 * 1024, 20);
    const error = await failure(fetchDeliverable(`${server.origin}/huge`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(error.code).toBe('TOO_LARGE');
    await stats.closed;
    expect(stats.closedAfter).toBeLessThan(CAP + 64 * 1024);
  });

  it('accepts exactly the cap and refuses one byte more', async () => {
    const body = randomBytes(CAP);
    const exact = await serve((_req, res) => res.end(body));
    const result = await fetchDeliverable(`${exact.origin}/`, options({ allowHosts: new Set([exact.hostPort]) }));
    expect(result.bytes.length).toBe(CAP);
    const over = await serve((_req, res) => {
      res.write(body);
      res.end(Buffer.from([1]));
    });
    expect((await failure(fetchDeliverable(`${over.origin}/`, options({ allowHosts: new Set([over.hostPort]) })))).code).toBe('TOO_LARGE');
  });

  it('honours a smaller maxBytes', async () => {
    const server = await serve((_req, res) => res.end('0123456789'));
    expect((await failure(fetchDeliverable(`${server.origin}/`, options({ allowHosts: new Set([server.hostPort]), maxBytes: 9 })))).code).toBe('TOO_LARGE');
  });
});

// ---------------------------------------------------------------------------------------------
// Timeout

describe('timeout', () => {
  it('times out on a server that accepts and never answers', async () => {
    const silent = await silentServer();
    const started = Date.now();
    const error = await failure(fetchDeliverable(`http://127.0.0.1:${silent.port}/`, options({ allowHosts: new Set([`127.0.0.1:${silent.port}`]), timeoutMs: 300 })));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toContain('300 ms');
    expect(silent.connections()).toBe(1);
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('times out while the body trickles in', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write('first part, then nothing');
    });
    const error = await failure(fetchDeliverable(`${server.origin}/`, options({ allowHosts: new Set([server.hostPort]), timeoutMs: 300 })));
    expect(error.code).toBe('TIMEOUT');
  });

  it('times out on a resolver that never answers', async () => {
    const error = await failure(fetchDeliverable('https://slow-dns.example.com/', options({ resolve: () => new Promise<never>(() => undefined), timeoutMs: 200 })));
    expect(error.code).toBe('TIMEOUT');
  });

  it('applies one deadline across redirects, not one per hop', async () => {
    const server = await serve((req, res) => {
      setTimeout(() => res.writeHead(302, { location: `${req.url ?? ''}x` }).end(), 150);
    });
    const error = await failure(fetchDeliverable(`${server.origin}/`, options({ allowHosts: new Set([server.hostPort]), timeoutMs: 400, maxRedirects: 10 })));
    expect(error.code).toBe('TIMEOUT');
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });

  it('times out at the default 10 s on a server that never answers', { timeout: 20_000 }, async () => {
    const silent = await silentServer();
    const started = Date.now();
    const error = await failure(fetchDeliverable(`http://127.0.0.1:${silent.port}/`, options({ allowHosts: new Set([`127.0.0.1:${silent.port}`]) })));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('TIMEOUT');
    expect(elapsed).toBeGreaterThanOrEqual(9_500);
    expect(elapsed).toBeLessThan(12_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Schemes, data:, ipfs:, HTTP status, happy path

describe('schemes', () => {
  it.each(['file:///etc/passwd', 'ftp://example.com/work.txt', 'javascript:alert(1)', 'gopher://example.com/', 'ws://example.com/', 'ipns://example.com/', 'http://example.com/work.txt'])(
    'refuses %s',
    async (uri) => {
      expect((await failure(fetchDeliverable(uri, options()))).code).toBe('UNSUPPORTED_SCHEME');
    },
  );

  it.each(['not a url', '', 'https://', '//example.com/x'])('refuses the invalid URI %j', async (uri) => {
    expect((await failure(fetchDeliverable(uri, options()))).code).toBe('INVALID_URI');
  });

  it('refuses credentials in the URL', async () => {
    expect((await failure(fetchDeliverable('https://user:pass@example.com/', options()))).code).toBe('INVALID_URI');
  });
});

describe('data: URIs', () => {
  it('decodes base64', async () => {
    const result = await fetchDeliverable('data:text/plain;base64,SGVsbG8sIFdvcmxk', options());
    expect(Buffer.from(result.bytes).toString()).toBe('Hello, World');
    expect(result.sha256).toBe(sha256(Buffer.from('Hello, World')));
    expect(result.contentType).toBe('text/plain');
  });

  it('decodes percent-encoded text and bytes, with the default media type', async () => {
    const result = await fetchDeliverable('data:,Hello%2C%20World%FF%00', options());
    expect([...result.bytes]).toEqual([...Buffer.from('Hello, World'), 0xff, 0x00]);
    expect(result.sha256).toBe(sha256(result.bytes));
    expect(result.contentType).toBe('text/plain;charset=US-ASCII');
    const plain = await fetchDeliverable('data:application/json,{"ok":true}#ignored', options());
    expect(Buffer.from(plain.bytes).toString()).toBe('{"ok":true}');
    expect(plain.contentType).toBe('application/json');
  });

  it('decodes binary base64 exactly', async () => {
    const body = randomBytes(3000);
    const result = await fetchDeliverable(`data:application/octet-stream;base64,${body.toString('base64')}`, options());
    expect(Buffer.from(result.bytes).equals(body)).toBe(true);
    expect(result.sha256).toBe(sha256(body));
  });

  it('caps inline data too', async () => {
    const exact = randomBytes(CAP);
    expect((await fetchDeliverable(`data:;base64,${exact.toString('base64')}`, options())).bytes.length).toBe(CAP);
    const over = randomBytes(CAP + 1);
    expect((await failure(fetchDeliverable(`data:;base64,${over.toString('base64')}`, options()))).code).toBe('TOO_LARGE');
    expect((await failure(fetchDeliverable(`data:,${'a'.repeat(CAP + 1)}`, options()))).code).toBe('TOO_LARGE');
    expect((await failure(fetchDeliverable(`data:,${'%41'.repeat(CAP + 1)}`, options()))).code).toBe('TOO_LARGE');
    expect((await fetchDeliverable(`data:,${'%41'.repeat(CAP)}`, options())).bytes.length).toBe(CAP);
  });

  it('refuses malformed data: URIs', async () => {
    expect((await failure(fetchDeliverable('data:text/plain;base64', options()))).code).toBe('INVALID_URI');
    expect((await failure(fetchDeliverable('data:;base64,not*base64', options()))).code).toBe('INVALID_URI');
    expect((await failure(fetchDeliverable('data:;base64,AAAAA', options()))).code).toBe('INVALID_URI');
  });
});

describe('ipfs://', () => {
  it('fetches through the configured gateway', async () => {
    const gateway = await serve((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })));
    const cid = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
    const result = await fetchDeliverable(`ipfs://${cid}/reports/final.json?x=1`, options({ ipfsGateway: `${gateway.origin}/ipfs/`, allowHosts: new Set([gateway.hostPort]) }));
    expect(gateway.requests.map((r) => r.url)).toEqual([`/ipfs/${cid}/reports/final.json?x=1`]);
    expect(result.finalUrl).toBe(`${gateway.origin}/ipfs/${cid}/reports/final.json?x=1`);
    expect(result.contentType).toBe('application/json');
    // A gateway without its trailing slash, and dot segments that cannot leave the CID.
    await fetchDeliverable(`ipfs://${cid}/a/../../../admin`, options({ ipfsGateway: `${gateway.origin}/ipfs`, allowHosts: new Set([gateway.hostPort]) }));
    expect(gateway.requests[1]!.url).toBe(`/ipfs/${cid}/admin`);
  });

  it('checks the gateway hop like any other', async () => {
    const gateway = await serve((_req, res) => res.end('x'));
    const error = await failure(fetchDeliverable('ipfs://bafkqaaa', options({ ipfsGateway: `https://127.0.0.1:${gateway.port}/ipfs/` })));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
    expect(gateway.requests).toHaveLength(0);
  });

  it('refuses an ipfs URI without a CID', async () => {
    expect((await failure(fetchDeliverable('ipfs:///just/a/path', options()))).code).toBe('INVALID_URI');
    expect((await failure(fetchDeliverable('ipfs://', options()))).code).toBe('INVALID_URI');
  });
});

describe('HTTP', () => {
  it('returns exactly the bytes the server sent, hashed', async () => {
    const body = randomBytes(50_000);
    const server = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(body));
    const result = await fetchDeliverable(`${server.origin}/work.pdf`, options({ allowHosts: new Set([server.hostPort]) }));
    expect(result.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(result.bytes).equals(body)).toBe(true);
    expect(result.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    expect(result.contentType).toBe('application/pdf');
    expect(result.finalUrl).toBe(`${server.origin}/work.pdf`);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses non-2xx answers', async () => {
    const server = await serve((req, res) => res.writeHead(req.url === '/missing' ? 404 : 304).end());
    const notFound = await failure(fetchDeliverable(`${server.origin}/missing`, options({ allowHosts: new Set([server.hostPort]) })));
    expect(notFound.code).toBe('HTTP_STATUS');
    expect(notFound.status).toBe(404);
    expect((await failure(fetchDeliverable(`${server.origin}/other`, options({ allowHosts: new Set([server.hostPort]) })))).code).toBe('HTTP_STATUS');
  });

  it('reports a refused connection and a failed lookup as NETWORK', async () => {
    const server = await serve((_req, res) => res.end());
    const port = server.port;
    await server.close();
    openServers.splice(0);
    expect((await failure(fetchDeliverable(`http://127.0.0.1:${port}/`, options({ allowHosts: new Set([`127.0.0.1:${port}`]) })))).code).toBe('NETWORK');
    const notFound = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    expect((await failure(fetchDeliverable('https://nowhere.example/', options({ resolve: notFound })))).code).toBe('NETWORK');
    expect((await failure(fetchDeliverable('https://nowhere.example/', options({ resolve: async () => [] })))).code).toBe('NETWORK');
  });

  it('reports a body cut short as NETWORK', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': 1000 });
      res.write('only part');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect((await failure(fetchDeliverable(`${server.origin}/`, options({ allowHosts: new Set([server.hostPort]) })))).code).toBe('NETWORK');
  });
});

afterAll(async () => {
  await Promise.all(openServers.splice(0).map((s) => s.close()));
});
