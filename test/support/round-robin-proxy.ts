import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests each upstream answered, in upstream order. */
  served(): number[];
  close(): Promise<void>;
}

/**
 * A round-robin HTTP proxy in front of several service instances (the cluster test's load
 * balancer). An upstream that refuses the connection (a dead instance) is skipped and the request,
 * never sent, goes to the next one; a connection that breaks after the request was sent answers 502,
 * since the instance may have acted on it.
 */
export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served = upstreams.map(() => 0);

  const forward = (index: number, request: http.IncomingMessage, body: Buffer, response: http.ServerResponse, tried: number) => {
    const target = new URL(request.url ?? '/', upstreams[index]);
    const outgoing = http.request(target, { method: request.method, headers: { ...request.headers, host: target.host } }, (upstream) => {
      served[index]!++;
      response.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(response);
    });
    outgoing.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && tried + 1 < upstreams.length) {
        forward((index + 1) % upstreams.length, request, body, response, tried + 1);
        return;
      }
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 'BAD_GATEWAY', error: `upstream ${upstreams[index]}: ${error.message}` }));
    });
    outgoing.end(body);
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = next;
      next = (next + 1) % upstreams.length;
      forward(index, request, Buffer.concat(chunks), response, 0);
    });
  });
  // Longer than any client keeps an idle connection (undici: 4 s, or the server's hint less 1 s), so
  // the client always closes first: a server closing an idle connection just as the client reuses
  // it resets that request (seen as ECONNRESET in a 200-call burst). `close()` ends them all anyway.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served: () => [...served],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
