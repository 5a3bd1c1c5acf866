import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';
import { SecretRedactor } from './secrets.js';

export type { Logger };

// Credentials a logged request or client error may carry in its headers, whatever their value.
const REDACTED_PATHS = ['authorization', 'x-agent-key', 'x-identity-token', 'cookie', 'set-cookie'].flatMap((header) => [
  `headers["${header}"]`,
  `*.headers["${header}"]`,
  `*.*.headers["${header}"]`,
]);

/**
 * JSON logs on stdout; every request's lines carry its `reqId` (src/http/request-context.ts).
 * Each finished line also passes through the secret redactor: a configured secret inside an error
 * message or a stack is replaced by its setting's name, wherever it sits in the line.
 */
export function createLogger(level: string, secrets?: SecretRedactor, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'payroll' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(secrets && !secrets.isEmpty ? { hooks: { streamWrite: (line: string) => secrets.redact(line) } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The service's logger as src/main.ts runs it: the configured level, every configured secret redacted. */
export function serviceLogger(config: Pick<Config, 'logLevel' | 'secrets'>, destination?: DestinationStream): Logger {
  return createLogger(config.logLevel, new SecretRedactor(config.secrets), destination);
}
