/**
 * Runs PGlite in its own thread behind a PostgreSQL wire-protocol socket, so the main thread talks
 * to it with node-postgres exactly as it would to a real server, and PGlite's synchronous work
 * never blocks the event loop (ARCHITECTURE.md, "Facts measured on this machine").
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PgliteWireServer } from './pglite-server.js';

const { dataDir, socketPath } = workerData as { dataDir: string | null; socketPath: string };

const db = await PGlite.create(dataDir ?? undefined);
const server = new PgliteWireServer(db);
await server.listen(socketPath);
parentPort?.postMessage({ type: 'ready' });

parentPort?.on('message', (message: { type: string }) => {
  if (message.type !== 'close') return;
  void (async () => {
    await server.close();
    await db.close();
    parentPort?.postMessage({ type: 'closed' });
  })();
});
