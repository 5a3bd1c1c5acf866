import net from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './client.js';

/** A TCP server on loopback; `onSocket` decides what happens to each connection. */
async function tcpServer(onSocket: (socket: net.Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// DB_CONNECT_TIMEOUT_MS and the pool's error log (docs/operations.md, "Database connections").
describe('database pool settings', () => {
  let engine: Database;
  beforeAll(async () => {
    engine = await openDatabase({ dataDir: null });
  });
  afterAll(() => engine.close());

  it('fails a query whose connection does not open within the connect timeout', async () => {
    // Accepts the TCP connection, never speaks: a server that is up but stuck.
    const silent = await tcpServer(() => {});
    const database = await openDatabase({ url: silent.url, dataDir: null, connectTimeoutMs: 300 });
    const started = Date.now();
    await expect(database.pool.query('SELECT 1')).rejects.toThrow(/timeout/i);
    expect(Date.now() - started).toBeLessThan(3_000);
    await database.close();
    await silent.close();
  });

  it('logs an idle connection lost (it was swallowed) and keeps serving with a new one', async () => {
    // A proxy in front of the real engine, so the test can cut a pooled connection.
    const accepted: net.Socket[] = [];
    const proxy = await tcpServer((socket) => {
      const upstream = net.connect(path.join(engine.connection.host!, '.s.PGSQL.5432'));
      accepted.push(socket);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => {}).once('close', () => socket.destroy());
      socket.on('error', () => {}).once('close', () => upstream.destroy());
    });
    const lines: { level: number; msg: string; err?: { message: string } }[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const database = await openDatabase({ url: proxy.url, dataDir: null, log });
    expect((await database.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);

    accepted.forEach((socket) => socket.destroy());
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'database connection lost (idle client)', err: { message: expect.stringMatching(/terminated/i) } });
    expect((await database.pool.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    await database.close();
    await proxy.close();
  });
});
