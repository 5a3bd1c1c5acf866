import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

export interface LoopbackServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

/** Serves a fetch handler on a free loopback port, for clients that need a real URL. */
export function serveOnLoopback(fetch: (request: Request) => Response | Promise<Response>): Promise<LoopbackServer> {
  return new Promise((resolve) => {
    // autoCleanupIncoming off: a body the route never read is then dumped by Node itself when the
    // answer ends. @hono/node-server's own clean-up force-closes the socket when that drain takes
    // over 500 ms (timers run late under load), and the client's next request on that keep-alive
    // socket meets "other side closed" (the fuzz suite, POSTs with bodies to routes that read none).
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1', autoCleanupIncoming: false }, () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets (a load generator's) would hold close() open.
            if ('closeIdleConnections' in server) server.closeIdleConnections();
          }),
      }),
    );
    // Node closes an idle keep-alive socket after 5 s, about when a client under load (its timers
    // late) sends on it again: the request meets "other side closed". Test clients only close idle
    // sockets themselves (undici: after 4 s), so the server outlasting them removes that race.
    if ('keepAliveTimeout' in server) {
      server.keepAliveTimeout = 65_000;
      server.headersTimeout = 66_000;
    }
  });
}

/** `serveOnLoopback` that counts requests inside the handler: `peak()` is the most at once since `resetPeak()`. */
export async function serveCountingOverlap(fetch: (request: Request) => Response | Promise<Response>): Promise<LoopbackServer & { peak(): number; resetPeak(): void }> {
  let inFlight = 0;
  let peak = 0;
  const server = await serveOnLoopback(async (request) => {
    peak = Math.max(peak, ++inFlight);
    try {
      return await fetch(request);
    } finally {
      inFlight--;
    }
  });
  return { ...server, peak: () => peak, resetPeak: () => (peak = 0) };
}
