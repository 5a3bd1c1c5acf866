import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from './support/database.js';
import { freePort, startServiceProcess, waitForHealthy, type ServiceProcess } from './support/service-process.js';
import { readSseEvents } from './support/sse.js';

const GRACE_SECONDS = 3;

/** A raw socket to the service that sends `text` and collects whatever comes back until it closes. */
function rawClient(port: number, text: string): { socket: net.Socket; answer: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(text);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const answer = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  socket.on('error', () => {}); // a reset is an answer too: the test reads what arrived
  return { socket, answer };
}

describe('shutdown (SIGTERM) with SHUTDOWN_GRACE_SECONDS', () => {
  let target: TestDatabaseTarget;
  let dataDir: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shutdown-test-'));
  });
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await target.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The service on a free port with a 3 s grace period (one process at a time: they share DATA_DIR). */
  async function start(): Promise<{ port: number; base: string; service: ServiceProcess }> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = startServiceProcess({
      PORT: String(port),
      DATA_DIR: dataDir,
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      LOG_LEVEL: 'info',
      ...(target.url ? { DATABASE_URL: target.url } : {}),
    });
    const started = service;
    await waitForHealthy(base, 45_000).catch((error: Error) => {
      throw new Error(`${error.message}; its output:\n${started.output()}`);
    });
    return { port, base, service: started };
  }

  it('ends the open event stream with its final event, answers the request in flight, drops a stalled client and exits 0 within the deadline', async () => {
    const { port, base, service } = await start();

    // A stalled client: half a request line's headers, never finished.
    const stalled = rawClient(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // A request in flight: its headers are in, its body arrives only after the signal.
    const body = JSON.stringify({ sub: 'in-flight-at-shutdown' });
    const slow = rawClient(
      port,
      `POST /api/dev/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // the service has both sockets and the slow request's headers

    // An open stream: the demo agent's narrated run (about a second in all), read up to its first step.
    const run = await fetch(`${base}/api/demo/run-agent`, { method: 'POST' });
    expect(run.status).toBe(200);
    const reader = run.body!.pipeThrough(new TextDecoderStream()).getReader();
    const events = await readSseEvents(reader, ({ event }) => event === 'step');

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    // A second signal during shutdown starts no second shutdown.
    setTimeout(() => service.child.kill('SIGTERM'), 100);
    await new Promise((resolve) => setTimeout(resolve, 400));
    slow.socket.write(body.slice(5));

    const exited = await service.exited;
    const elapsed = Date.now() - signalled;
    expect(exited, service.output()).toEqual({ code: 0, signal: null });
    // Within the deadline; the margin is this test noticing the exit, not the service.
    expect(elapsed).toBeLessThan(GRACE_SECONDS * 1000 + 500);
    expect(service.output().match(/"msg":"shutting down"/g)).toHaveLength(1);
    expect(service.output()).toMatch(/"msg":"already shutting down"/);
    expect(service.output()).not.toMatch(/cut off|deadline passed/);

    // The stream's final event came after a step saying why the run stopped.
    await readSseEvents(reader, () => false, events);
    const last = events.at(-1)!;
    expect(last.event).toBe('done');
    expect(events.at(-2)).toMatchObject({ event: 'step', data: { kind: 'error', message: expect.stringMatching(/shutting down/) } });

    const answer = await slow.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/"token":"[\w-]+\.[\w-]+\.[\w-]+"/);
    // The stalled client got nothing: its socket was closed under it.
    expect(await stalled.answer).toBe('');
  }, 90_000);

  it('cuts off an answer that does not finish in time and exits 1, still within the deadline', async () => {
    const { port, service } = await start();
    // Headers in, body never completed: an answer the service cannot finish.
    const stuck = rawClient(port, 'POST /api/dev/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    await new Promise((resolve) => setTimeout(resolve, 300));

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    const exited = await service.exited;
    expect(exited, service.output()).toEqual({ code: 1, signal: null });
    expect(Date.now() - signalled).toBeLessThan(GRACE_SECONDS * 1000 + 500);
    expect(service.output()).toMatch(/shutdown: answers still running were cut off/);
    expect(await stuck.answer).toBe('');
  }, 90_000);
});
