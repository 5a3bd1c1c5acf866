import { createTransport, type NodemailerError, type Transporter } from 'nodemailer';

/** One email as features write it; the outbox row is its durable form. */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string | null;
}

/**
 * The email port (ARCHITECTURE.md, "providers"). `messageId` is the outbox row id: a transport
 * derives the Message-ID header from it, so every attempt at one row carries the same id.
 * `send` resolves once the message is accepted for delivery, and throws `EmailDeliveryError`.
 */
export interface EmailTransport {
  readonly name: 'outbox' | 'smtp';
  send(message: EmailMessage & { messageId: string }): Promise<void>;
}

export interface EmailDeliveryErrorOptions {
  /** Sending this message again would be refused again (a 5xx reply to it): give up on it. */
  permanent: boolean;
  /**
   * The failure is the server's or the connection's, not this message's (unreachable, timed out,
   * 421, login refused, our sender refused): every other message would fail the same way now.
   */
  serverSide?: boolean;
  cause?: unknown;
}

export class EmailDeliveryError extends Error {
  readonly permanent: boolean;
  readonly serverSide: boolean;

  constructor(message: string, options: EmailDeliveryErrorOptions) {
    super(message, { cause: options.cause });
    this.name = 'EmailDeliveryError';
    this.permanent = options.permanent;
    this.serverSide = options.serverSide ?? false;
  }
}

/**
 * Local mode: nothing leaves the machine. The outbox row is the delivered mail (admins read it in
 * the outbox), so sending always succeeds.
 */
export class OutboxTransport implements EmailTransport {
  readonly name = 'outbox' as const;

  async send(): Promise<void> {}
}

export interface SmtpTransportOptions {
  /** `smtp://` (STARTTLS when offered) or `smtps://` (TLS), with `user:pass@` for a login. */
  url: string;
  /** The From address, e.g. `Payroll <no-reply@example.com>`; its domain names our Message-IDs. */
  from: string;
  /** Limit on connecting, on the greeting and on each silence of the server. Default 10 s. */
  timeoutMs?: number;
}

/** Live mode: one SMTP connection per message through nodemailer. */
export class SmtpTransport implements EmailTransport {
  readonly name = 'smtp' as const;
  private readonly mailer: Transporter;
  private readonly from: string;
  private readonly messageIdDomain: string;

  constructor(options: SmtpTransportOptions) {
    const url = URL.canParse(options.url) ? new URL(options.url) : null;
    // The URL carries the password: errors name the problem, never the URL.
    if (url?.protocol !== 'smtp:' && url?.protocol !== 'smtps:') throw new Error('the SMTP URL must start with smtp:// or smtps://');
    const domain = /@([^\s@<>]+)>?\s*$/.exec(options.from)?.[1];
    if (!domain) throw new Error(`the email From address "${options.from}" has no domain`);
    const timeout = options.timeoutMs ?? 10_000;
    this.mailer = createTransport({
      url: options.url,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      // A login never crosses the network in clear: with credentials, smtp:// must upgrade with
      // STARTTLS (a server that stops offering it is refused, not trusted).
      requireTLS: url.protocol === 'smtp:' && (url.username !== '' || url.password !== ''),
    });
    this.from = options.from;
    this.messageIdDomain = domain;
  }

  async send(message: EmailMessage & { messageId: string }): Promise<void> {
    try {
      await this.mailer.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html ? { html: message.html } : {}),
        messageId: `<${message.messageId}@${this.messageIdDomain}>`,
      });
    } catch (error) {
      throw classifySmtpError(error);
    }
  }
}

// Failures of the connection, the TLS handshake, the login or the server's replies in general:
// they say nothing about the message being sent.
const SERVER_SIDE_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EPROXY', 'EPROTOCOL', 'EAUTH', 'ENOAUTH']);

function classifySmtpError(error: unknown): EmailDeliveryError {
  const { message, code, responseCode, command, permanent }: NodemailerError = error instanceof Error ? error : new Error(String(error));
  // Nodemailer marks a reply permanent by RFC 5321 (5yz, except 503: commands out of sequence).
  // Only a refusal of this message (its recipient or its content) condemns it; a refused sender
  // (MAIL FROM) is our configuration and would refuse all mail.
  if (permanent && (command === 'RCPT TO' || command === 'DATA')) {
    return new EmailDeliveryError(message, { permanent: true, cause: error });
  }
  // Nodemailer refused the message itself before sending it (no valid recipient, over the size limit).
  if (responseCode === undefined && (code === 'EENVELOPE' || code === 'EMESSAGE')) {
    return new EmailDeliveryError(message, { permanent: true, cause: error });
  }
  const serverSide = responseCode === 421 || command === 'MAIL FROM' || (code !== undefined && SERVER_SIDE_CODES.has(code));
  return new EmailDeliveryError(message, { permanent: false, serverSide, cause: error });
}
