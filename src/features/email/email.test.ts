import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/support/database.js';
import type { Database } from '../../db/client.js';
import type { JobDefinition, JobRunner } from '../../jobs/runner.js';
import {
  EmailDeliveryError,
  OutboxTransport,
  SmtpTransport,
  type EmailMessage,
  type EmailTransport,
} from '../../providers/email/transport.js';
import { createEmailTransport, defineEmailJobs } from './jobs.js';
import { deliverQueuedEmails, queueEmail } from './outbox.js';

let database: Database;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ database, close } = await openTestDatabase());
});
afterAll(async () => {
  await close();
});
beforeEach(async () => {
  await database.pool.query('DELETE FROM email_outbox');
});

type Sent = EmailMessage & { messageId: string };

/** Records every send; `fail` decides, per message, to throw instead. */
class CountingTransport implements EmailTransport {
  readonly name = 'smtp' as const;
  readonly sent: Sent[] = [];
  constructor(private readonly fail: (message: Sent) => Error | undefined = () => undefined) {}

  async send(message: Sent): Promise<void> {
    // Yield to the other rounds, as a real network send would.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const error = this.fail(message);
    if (error) throw error;
    this.sent.push(message);
  }
}

async function queue(keys: string[]): Promise<void> {
  for (const key of keys) {
    await queueEmail(database.db, { to: `${key}@staff.example`, subject: `Hello ${key}`, text: `Body of ${key}`, dedupeKey: `test:${key}` });
  }
}

async function row(key: string) {
  const { rows } = await database.pool.query('SELECT * FROM email_outbox WHERE dedupe_key = $1', [`test:${key}`]);
  return rows[0]!;
}

describe('queueEmail', () => {
  it('queues one row per dedupe key', async () => {
    const message = { to: 'ada@staff.example', subject: 'Receipt', text: 'Paid.', html: '<p>Paid.</p>', dedupeKey: 'payroll-receipt:r1:e1' };
    expect(await queueEmail(database.db, message)).toBe(true);
    expect(await queueEmail(database.db, { ...message, subject: 'Receipt again' })).toBe(false);
    const { rows } = await database.pool.query('SELECT subject, body_html, status, attempts FROM email_outbox');
    expect(rows).toEqual([{ subject: 'Receipt', body_html: '<p>Paid.</p>', status: 'queued', attempts: 0 }]);
  });

  it("joins the caller's transaction: a rollback queues nothing", async () => {
    await expect(
      database.transaction(async (tx) => {
        expect(await queueEmail(tx.db, { to: 'a@staff.example', subject: 's', text: 't', dedupeKey: 'tx:1' })).toBe(true);
        throw new Error('the business change failed');
      }),
    ).rejects.toThrow('the business change failed');
    await database.transaction((tx) => queueEmail(tx.db, { to: 'a@staff.example', subject: 's', text: 't', dedupeKey: 'tx:2' }));
    const { rows } = await database.pool.query('SELECT dedupe_key FROM email_outbox');
    expect(rows).toEqual([{ dedupe_key: 'tx:2' }]);
  });
});

describe('deliverQueuedEmails', () => {
  it('marks rows sent through the outbox transport (local mode), once', async () => {
    await queue(['a', 'b']);
    expect(await deliverQueuedEmails(database.db, new OutboxTransport())).toEqual({ sent: 2, failed: 0, retried: 0 });
    expect(await row('a')).toMatchObject({ status: 'sent', attempts: 1, last_error: null, sent_at: expect.any(Date) });
    expect(await deliverQueuedEmails(database.db, new OutboxTransport())).toEqual({ sent: 0, failed: 0, retried: 0 });
  });

  it('hands the transport the message and the row id as its message id', async () => {
    await queueEmail(database.db, { to: 'h@staff.example', subject: 'S', text: 'T', html: '<b>T</b>', dedupeKey: 'test:h' });
    const transport = new CountingTransport();
    await deliverQueuedEmails(database.db, transport);
    expect(transport.sent).toEqual([{ to: 'h@staff.example', subject: 'S', text: 'T', html: '<b>T</b>', messageId: (await row('h')).id }]);
  });

  it('sends each row exactly once when five rounds run at the same time', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `c${i}`);
    await queue(keys);
    const transport = new CountingTransport();
    const results = await Promise.all(Array.from({ length: 5 }, () => deliverQueuedEmails(database.db, transport)));
    expect(results.reduce((sum, r) => sum + r.sent, 0)).toBe(30);
    expect(transport.sent.map((m) => m.to).sort()).toEqual(keys.map((k) => `${k}@staff.example`).sort());
    const { rows } = await database.pool.query("SELECT count(*)::int AS n FROM email_outbox WHERE status = 'sent' AND attempts = 1");
    expect(rows[0].n).toBe(30);
  });

  it('leaves a row being sent to its round, and sends it again once the lease of a crashed round expires', async () => {
    await queue(['x']);
    // What a round that crashed mid-send leaves behind: claimed (attempt counted, sent_at stamped), still queued.
    await database.pool.query("UPDATE email_outbox SET attempts = 1, sent_at = now() WHERE dedupe_key = 'test:x'");
    const transport = new CountingTransport();
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 0, failed: 0, retried: 0 });
    await database.pool.query("UPDATE email_outbox SET sent_at = now() - interval '11 minutes' WHERE dedupe_key = 'test:x'");
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 1, failed: 0, retried: 0 });
    expect(await row('x')).toMatchObject({ status: 'sent', attempts: 2 });
    expect(transport.sent[0]!.messageId).toBe((await row('x')).id);
  });

  it('keeps a temporarily failed row queued with its error and counts the attempt', async () => {
    await queue(['t']);
    const transport = new CountingTransport(() => new EmailDeliveryError('451 try again later', { permanent: false }));
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 0, failed: 0, retried: 1 });
    expect(await row('t')).toMatchObject({ status: 'queued', attempts: 1, last_error: '451 try again later', sent_at: null });
    await deliverQueuedEmails(database.db, transport);
    expect(await row('t')).toMatchObject({ status: 'queued', attempts: 2 });
    // An unexpected error from a transport counts as temporary too.
    await deliverQueuedEmails(database.db, new CountingTransport(() => new Error('bug')));
    expect(await row('t')).toMatchObject({ status: 'queued', attempts: 3, last_error: 'Error: bug' });
    await deliverQueuedEmails(database.db, new OutboxTransport());
    expect(await row('t')).toMatchObject({ status: 'sent', attempts: 4, last_error: null });
  });

  it('fails a row on a permanent error at once', async () => {
    await queue(['p', 'ok']);
    const transport = new CountingTransport((m) => (m.to.startsWith('p@') ? new EmailDeliveryError('550 no such user', { permanent: true }) : undefined));
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 1, failed: 1, retried: 0 });
    expect(await row('p')).toMatchObject({ status: 'failed', attempts: 1, last_error: '550 no such user' });
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 0, failed: 0, retried: 0 });
  });

  it('fails a row whose attempts reach maxAttempts', async () => {
    await queue(['m']);
    const transport = new CountingTransport(() => new EmailDeliveryError('452 mailbox full', { permanent: false }));
    for (let attempt = 1; attempt < 3; attempt++) {
      expect(await deliverQueuedEmails(database.db, transport, { maxAttempts: 3 })).toEqual({ sent: 0, failed: 0, retried: 1 });
    }
    expect(await deliverQueuedEmails(database.db, transport, { maxAttempts: 3 })).toEqual({ sent: 0, failed: 1, retried: 0 });
    expect(await row('m')).toMatchObject({ status: 'failed', attempts: 3, last_error: '452 mailbox full' });
  });

  it('stops the round at a server-side failure without counting the attempt', async () => {
    await queue(['s1', 's2', 's3']);
    const down = new CountingTransport(() => new EmailDeliveryError('connect ECONNREFUSED', { permanent: false, serverSide: true }));
    for (let round = 0; round < 10; round++) {
      expect(await deliverQueuedEmails(database.db, down, { maxAttempts: 2 })).toEqual({ sent: 0, failed: 0, retried: 1 });
    }
    expect(await row('s1')).toMatchObject({ status: 'queued', attempts: 0, last_error: 'connect ECONNREFUSED' });
    expect(await row('s2')).toMatchObject({ status: 'queued', attempts: 0 });
    expect(await deliverQueuedEmails(database.db, new OutboxTransport())).toEqual({ sent: 3, failed: 0, retried: 0 });
  });

  it('takes rows that have not failed before rows waiting for a retry', async () => {
    await queue(['old', 'new']);
    const transport = new CountingTransport((m) => (m.to.startsWith('old@') ? new EmailDeliveryError('451 later', { permanent: false }) : undefined));
    await deliverQueuedEmails(database.db, transport, { limit: 1 });
    await deliverQueuedEmails(database.db, transport, { limit: 1 });
    expect(await row('new')).toMatchObject({ status: 'sent' });
    expect(await row('old')).toMatchObject({ status: 'queued', attempts: 1 });
  });
});

describe('email jobs', () => {
  it('chooses the transport by mode; live mode needs SMTP_URL and EMAIL_FROM', () => {
    expect(createEmailTransport({ mode: 'local' }).name).toBe('outbox');
    expect(createEmailTransport({ mode: 'live', smtpUrl: 'smtp://mail.example:587', emailFrom: 'no-reply@example.com' }).name).toBe('smtp');
    expect(() => createEmailTransport({ mode: 'live', emailFrom: 'no-reply@example.com' })).toThrow(/SMTP_URL/);
    expect(() => createEmailTransport({ mode: 'live', smtpUrl: 'smtp://mail.example' })).toThrow(/EMAIL_FROM/);
  });

  it('defines deliver-emails every minute, delivering the queue', async () => {
    const defined: JobDefinition[] = [];
    const jobs = { define: (definition: JobDefinition) => defined.push(definition) } as unknown as JobRunner;
    const transport = new CountingTransport();
    defineEmailJobs(jobs, { database, transport });
    expect(defined.map((d) => [d.name, d.schedule])).toEqual([['deliver-emails', '* * * * *']]);

    // More than one round's worth: the run keeps going while rounds come back full.
    await queue(Array.from({ length: 120 }, (_, i) => `j${i}`));
    const log = { info: () => {} } as never;
    await defined[0]!.handle({}, { jobId: 'j', retryCount: 0, signal: new AbortController().signal, log });
    expect(transport.sent).toHaveLength(120);
  });
});

/** A minimal SMTP server: enough of RFC 5321 for nodemailer to send one message per session. */
async function startSmtpServer(): Promise<{ port: number; messages: string[]; commands: string[]; close(): Promise<void> }> {
  const messages: string[] = [];
  const commands: string[] = [];
  const server = net.createServer((socket) => {
    socket.setEncoding('utf8');
    let buffer = '';
    let data: string[] | null = null;
    const reply = (line: string) => socket.write(`${line}\r\n`);
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (data) {
          if (line === '.') {
            messages.push(data.join('\r\n'));
            data = null;
            reply('250 2.0.0 queued');
          } else {
            data.push(line.startsWith('..') ? line.slice(1) : line);
          }
          continue;
        }
        commands.push(line);
        const command = line.slice(0, 4).toUpperCase();
        if (command === 'EHLO' || command === 'HELO') reply('250 smtp.test');
        else if (command === 'MAIL') reply('250 2.1.0 ok');
        else if (command === 'RCPT') {
          if (line.includes('<rejected@')) reply('550 5.1.1 no such user');
          else if (line.includes('<busy@')) reply('450 4.2.1 mailbox busy, try later');
          else reply('250 2.1.5 ok');
        } else if (command === 'DATA') {
          data = [];
          reply('354 end with <CRLF>.<CRLF>');
        } else if (command === 'RSET' || command === 'NOOP') reply('250 ok');
        else if (command === 'QUIT') {
          reply('221 bye');
          socket.end();
        } else reply('502 5.5.2 not implemented');
      }
    });
    socket.on('error', () => {});
    reply('220 smtp.test ESMTP');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, messages, commands, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function sendError(transport: EmailTransport, to: string): Promise<EmailDeliveryError> {
  const error = await transport.send({ to, subject: 's', text: 't', messageId: 'm' }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmailDeliveryError);
  return error as EmailDeliveryError;
}

describe('SmtpTransport', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let transport: SmtpTransport;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    transport = new SmtpTransport({ url: `smtp://127.0.0.1:${smtp.port}`, from: 'Payroll <no-reply@payroll.test>', timeoutMs: 5000 });
  });
  afterAll(() => smtp.close());

  it('sends the message with a Message-ID derived from the outbox row id', async () => {
    const id = '0b8e4c1e-1f7a-4f3e-9d55-6a0f1d2c3b4a';
    await transport.send({ to: 'ada@staff.example', subject: 'Your payroll receipt', text: 'You were paid 100 USD.', html: '<p>You were paid.</p>', messageId: id });
    const message = smtp.messages.at(-1)!;
    expect(message).toMatch(/^Subject: Your payroll receipt$/m);
    expect(message).toMatch(/^From: Payroll <no-reply@payroll\.test>$/m);
    expect(message).toMatch(/^To: ada@staff\.example$/m);
    expect(message).toMatch(new RegExp(`^Message-ID: <${id}@payroll\\.test>$`, 'm'));
    expect(message).toContain('You were paid 100 USD.');
    expect(message).toContain('<p>You were paid.</p>');
  });

  it('maps a 5xx recipient refusal to permanent and a 4xx one to temporary', async () => {
    const refused = await sendError(transport, 'rejected@staff.example');
    expect(refused).toMatchObject({ permanent: true, serverSide: false });
    expect(refused.message).toContain('550 5.1.1 no such user');
    expect(await sendError(transport, 'busy@staff.example')).toMatchObject({ permanent: false, serverSide: false });
  });

  it('maps a closed port to a temporary, server-side failure', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = new SmtpTransport({ url: `smtp://127.0.0.1:${port}`, from: 'no-reply@payroll.test', timeoutMs: 2000 });
    expect(await sendError(unreachable, 'ada@staff.example')).toMatchObject({ permanent: false, serverSide: true });
  });

  it('fails an outbox row the server refuses and sends the others, through deliverQueuedEmails', async () => {
    await queueEmail(database.db, { to: 'rejected@staff.example', subject: 'Nope', text: 'x', dedupeKey: 'test:r' });
    await queueEmail(database.db, { to: 'grace@staff.example', subject: 'Invite', text: 'Welcome aboard', dedupeKey: 'test:g' });
    expect(await deliverQueuedEmails(database.db, transport)).toEqual({ sent: 1, failed: 1, retried: 0 });
    expect(await row('r')).toMatchObject({ status: 'failed', last_error: expect.stringContaining('550') });
    expect(smtp.messages.at(-1)).toContain(`Message-ID: <${(await row('g')).id}@payroll.test>`);
  });

  it('never logs in without TLS: credentials on smtp:// require STARTTLS, which this server lacks', async () => {
    const withLogin = new SmtpTransport({ url: `smtp://payroll:secret@127.0.0.1:${smtp.port}`, from: 'no-reply@payroll.test', timeoutMs: 2000 });
    const before = smtp.commands.length;
    expect(await sendError(withLogin, 'ada@staff.example')).toMatchObject({ permanent: false, serverSide: true });
    const sessionCommands = smtp.commands.slice(before);
    expect(sessionCommands.some((c) => c.startsWith('STARTTLS'))).toBe(true);
    expect(sessionCommands.some((c) => c.startsWith('AUTH') || c.startsWith('MAIL'))).toBe(false);
  });

  it('refuses a URL that is not SMTP and a From address without a domain', () => {
    expect(() => new SmtpTransport({ url: 'https://user:secret@mail.example', from: 'a@b.example' })).toThrow(/smtp:\/\//);
    expect(() => new SmtpTransport({ url: 'https://user:secret@mail.example', from: 'a@b.example' })).not.toThrow(/secret/);
    expect(() => new SmtpTransport({ url: 'smtp://mail.example', from: 'payroll' })).toThrow(/no domain/);
  });
});
