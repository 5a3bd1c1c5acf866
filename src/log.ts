import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout; every request's lines carry its `reqId` (src/http/request-context.ts). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'payroll' }, timestamp: pino.stdTimeFunctions.isoTime });
}
