/** The email feature's public face: the outbox other features queue into, and its jobs. */
export { queueEmail, queueEmails, type OutgoingEmail } from './outbox.js';
export { createEmailTransport, defineEmailJobs } from './jobs.js';
// The admin view.
export { outboxCounts, outboxPage, type OutboxRow } from './outbox.js';
