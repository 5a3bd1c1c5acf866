/**
 * Runs PGlite in its own thread behind a PostgreSQL wire-protocol socket, so the main thread talks
 * to it with node-postgres exactly as it would to a real server, and PGlite's synchronous work
 * never blocks the event loop (ARCHITECTURE.md, "Facts measured on this machine").
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, socketPath } = workerData as { dataDir: string | null; socketPath: string };

const db = await PGlite.create(dataDir ?? undefined);
// Every connection shares PGlite's one session; the server runs one connection's transaction at
// a time and queues the others' queries behind it.
const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 256 });
await server.start();
parentPort?.postMessage({ type: 'ready' });

parentPort?.on('message', (message: { type: string }) => {
  if (message.type !== 'close') return;
  void (async () => {
    await server.stop();
    await db.close();
    parentPort?.postMessage({ type: 'closed' });
  })();
});
