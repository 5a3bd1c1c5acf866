import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net, { isIP, type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import type { ResolvedAddress, Resolver } from '../../../src/features/escrow/fetch-deliverable.js';

/**
 * A stand-in for the public internet, for the SSRF corpus: no packet leaves the machine.
 *
 * The deliverable fetcher resolves through an injectable resolver, then connects with node:http(s)
 * pinned to the checked addresses. While `open()` is active, every connection node:https opens is
 * recorded (the URL host, SNI, and the address the fetcher's pinned lookup gives) and carried over
 * loopback to one TLS server that plays every public host; node:http connections are recorded and
 * cut (the corpus never allows plain http). Certificate checks stay on: the server's certificate
 * (below) is trusted for these connections only, for the names and addresses it lists.
 */

/** Throw-away self-signed certificate (test only, expires 2126): public.example, *.public.example, 93.184.215.14, 2606:4700::6810:84e5. */
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXqB/vrE+mgFQqwqe
cMrPQXq6iuAdEZ0XL0yIRWnBopChRANCAAT/CwtATlCdwc3qBWxdH+oWkjLz4J4M
kxdJJ3zikLLPy3CE5JQaZcEeQf2Jm377k2mxkrZj46a70XQId+OjaJX/
-----END PRIVATE KEY-----
`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIB0DCCAXagAwIBAgIUc1nih7Fk5qlIkpOQndz/YIcrQDAwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOcHVibGljLmV4YW1wbGUwIBcNMjYxMTI1MTEzOTUwWhgPMjEy
NjExMDExMTM5NTBaMBkxFzAVBgNVBAMMDnB1YmxpYy5leGFtcGxlMFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAE/wsLQE5QncHN6gVsXR/qFpIy8+CeDJMXSSd84pCy
z8twhOSUGmXBHkH9iZt++5NpsZK2Y+Omu9F0CHfjo2iV/6OBmTCBljAdBgNVHQ4E
FgQUdJs454J2/6ETbIouJQQ/q9c8gfIwHwYDVR0jBBgwFoAUdJs454J2/6ETbIou
JQQ/q9c8gfIwQwYDVR0RBDwwOoIOcHVibGljLmV4YW1wbGWCECoucHVibGljLmV4
YW1wbGWHBF241w6HECYGRwAAAAAAAAAAAGgQhOUwDwYDVR0TAQH/BAUwAwEB/zAK
BggqhkjOPQQDAgNIADBFAiA6WbkAe2Qv49BMip1Gnvry+fxDWmkAFPFPSbZgZQ23
UQIhAIWBTmD9n3sUTv/aBV1J7JpPpi12ln9fA9xcf3a7MNlu
-----END CERTIFICATE-----
`;

/** Public unicast addresses the certificate names; the fetcher must allow them. */
export const PUBLIC_V4 = '93.184.215.14';
export const PUBLIC_V6 = '2606:4700::6810:84e5';

export interface Connection {
  /** The host the fetcher connected to (a name, or an IP literal without brackets). */
  host: string;
  servername: string | undefined;
  /** The addresses the fetcher's pinned lookup answered for `host` (the literal itself for an IP). */
  addresses: string[];
  tls: boolean;
}

export interface PublicInternet {
  connections: Connection[];
  /** Requests the fake public hosts served: Host header and path. */
  requests: { host: string; url: string }[];
  close(): Promise<void>;
}

/**
 * The fake public hosts. `/redirect?to=<url>&status=<3xx>` redirects; `/hops?n=<k>` redirects to
 * `/hops?n=<k+1>` forever (a chain over any limit); `/loop` redirects to itself; anything else answers 200 with a text naming the
 * host and path.
 */
function servePublic(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'https://placeholder');
  if (url.pathname === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' }).end();
  } else if (url.pathname === '/loop') {
    res.writeHead(302, { location: '/loop' }).end();
  } else if (url.pathname === '/hops') {
    res.writeHead(302, { location: `/hops?n=${Number(url.searchParams.get('n') ?? 0) + 1}` }).end();
  } else {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`public content from ${req.headers.host ?? '?'}${req.url ?? ''}`);
  }
}

type Patchable = { createConnection: (...args: unknown[]) => unknown };

/** Starts the fake public internet and routes node:http(s) connections through it until close(). */
export async function openPublicInternet(): Promise<PublicInternet> {
  const connections: Connection[] = [];
  const requests: { host: string; url: string }[] = [];
  const server = https.createServer({ key: KEY, cert: CERT }, (req, res) => {
    requests.push({ host: req.headers.host ?? '', url: req.url ?? '' });
    servePublic(req, res);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const record = (options: { host?: string; servername?: string; lookup?: (...args: unknown[]) => void }, isTls: boolean): Connection => {
    const host = options.host ?? '';
    let addresses = [host];
    if (isIP(host) === 0 && options.lookup) {
      // The fetcher's pinned lookup answers synchronously with the addresses it validated.
      options.lookup(host, { all: true }, (error: Error | null, answer: { address: string }[]) => {
        addresses = error ? [`lookup error: ${error.message}`] : answer.map((a) => a.address);
      });
    }
    const connection = { host, servername: options.servername, addresses, tls: isTls };
    connections.push(connection);
    return connection;
  };

  const httpsProto = https.Agent.prototype as unknown as Patchable;
  const httpProto = http.Agent.prototype as unknown as Patchable;
  const originalHttps = httpsProto.createConnection;
  const originalHttp = httpProto.createConnection;
  httpsProto.createConnection = function (options: tls.ConnectionOptions & { lookup?: (...args: unknown[]) => void }) {
    record(options, true);
    // Same options (host and SNI unchanged, so the certificate is checked against the URL's host), over loopback.
    return tls.connect({ ...options, socket: net.connect(port, '127.0.0.1'), ca: CERT });
  } as Patchable['createConnection'];
  httpProto.createConnection = function (options: { host?: string }) {
    record(options, false);
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(new Error('plain http is not part of the fake public internet')));
    return socket;
  } as Patchable['createConnection'];

  return {
    connections,
    requests,
    close: async () => {
      httpsProto.createConnection = originalHttps;
      httpProto.createConnection = originalHttp;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A resolver over a fixed table (no DNS query ever leaves the process): exact names first, then
 * `*.suffix` entries; anything else is ENOTFOUND. Counts lookups per name.
 */
export function tableResolver(table: Record<string, ReadonlyArray<ResolvedAddress>>): Resolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    const exact = table[hostname];
    if (exact) return exact;
    const wildcard = Object.entries(table).find(([name]) => name.startsWith('*.') && hostname.endsWith(name.slice(1)));
    if (wildcard) return wildcard[1];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };
  return Object.assign(resolve, { lookups });
}

export const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
export const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });
