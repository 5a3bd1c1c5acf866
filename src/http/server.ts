import type { Server } from 'node:http';
import { serve } from '@hono/node-server';

export interface HttpServer {
  server: Server;
  /**
   * Stops accepting connections, closes idle keep-alive sockets and waits up to `ms` for the answers
   * in flight (open event streams included) to finish; then destroys every socket left (a client
   * stalled mid-request, an answer that ran out of time). Resolves true when every answer finished.
   */
  drain(ms: number): Promise<boolean>;
}

export function listen(fetch: (request: Request) => Response | Promise<Response>, port: number, hostname: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname }, () => resolve(drainable(server as Server))) as Server;
    server.once('error', reject);
  });
}

function drainable(server: Server): HttpServer {
  // Counted from the parsed request to the end of its answer; a half-sent request is not one.
  let inFlight = 0;
  let onIdle = () => {};
  server.on('request', (_request, response) => {
    inFlight += 1;
    response.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) onIdle();
    });
  });
  return {
    server,
    async drain(ms) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const answered =
        inFlight === 0 ||
        (await new Promise<boolean>((resolve) => {
          onIdle = () => resolve(true);
          timer = setTimeout(() => resolve(false), ms);
        }));
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
      return answered;
    },
  };
}
