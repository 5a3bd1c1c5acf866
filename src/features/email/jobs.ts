import type { Database } from '../../db/client.js';
import type { JobRunner } from '../../jobs/runner.js';
import { OutboxTransport, SmtpTransport, type EmailTransport } from '../../providers/email/transport.js';
import { deliverQueuedEmails } from './outbox.js';

export interface EmailTransportConfig {
  mode: 'local' | 'live';
  smtpUrl?: string | undefined;
  emailFrom?: string | undefined;
}

/** Local mode keeps mail in the outbox; live mode sends it over SMTP. */
export function createEmailTransport(config: EmailTransportConfig): EmailTransport {
  if (config.mode === 'local') return new OutboxTransport();
  if (!config.smtpUrl || !config.emailFrom) {
    throw new Error('live mode sends email over SMTP: set SMTP_URL and EMAIL_FROM');
  }
  return new SmtpTransport({ url: config.smtpUrl, from: config.emailFrom });
}

const ROUND_SIZE = 50;
// Rounds continue while they find a full batch, for at most this long: a burst (a thousand
// invites) drains in one run, and the run ends well before pg-boss presumes it dead (300 s).
const RUN_BUDGET_MS = 60_000;

export function defineEmailJobs(jobs: JobRunner, deps: { database: Database; transport: EmailTransport }): void {
  jobs.define({
    name: 'deliver-emails',
    schedule: '* * * * *',
    async handle(_data, { log }) {
      const deadline = Date.now() + RUN_BUDGET_MS; // real time: a run budget, not a rule of the service's time
      const total = { sent: 0, failed: 0, retried: 0 };
      let full: boolean;
      do {
        const round = await deliverQueuedEmails(deps.database.db, deps.transport, { limit: ROUND_SIZE });
        total.sent += round.sent;
        total.failed += round.failed;
        total.retried += round.retried;
        // Another round only after a full batch all done: a short one ran out of mail or lost rows
        // to another worker, and a retry waits for the next run rather than burning its attempts now.
        full = round.sent + round.failed === ROUND_SIZE;
      } while (full && Date.now() < deadline);
      if (total.sent + total.failed + total.retried > 0) log.info({ transport: deps.transport.name, ...total }, 'emails delivered');
    },
  });
}
