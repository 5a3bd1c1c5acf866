import path from 'node:path';
import { z } from 'zod';
import { createLogger } from '../log.js';
import { startDevnet } from './devnet.js';

// `npm run devnet`: the embedded chains for several service instances (README, "Several instances").
const settings = z
  .object({
    DEVNET_PORT: z.coerce.number().int().min(0).max(65535).default(8545),
    // Its faucet mints for anyone and its / hands out the operator keys: loopback unless told otherwise.
    DEVNET_HOST: z.string().trim().min(1).default('127.0.0.1'),
    DATA_DIR: z.string().trim().min(1).default('./data/devnet'),
    DATABASE_URL: z.preprocess((value) => (value === '' ? undefined : value), z.url().optional()),
    VIRTUAL_MASTER_ZERO_BYTES: z.coerce.number().int().min(0).max(4).default(4),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .safeParse(process.env);
if (!settings.success) {
  for (const issue of settings.error.issues) process.stderr.write(`${issue.path.join('.')}: ${issue.message}\n`);
  process.exit(1);
}
const env = settings.data;
const log = createLogger(env.LOG_LEVEL);
const devnet = await startDevnet({
  port: env.DEVNET_PORT,
  host: env.DEVNET_HOST,
  databaseUrl: env.DATABASE_URL,
  dataDir: path.resolve(env.DATA_DIR),
  virtualMasterZeroBytes: env.VIRTUAL_MASTER_ZERO_BYTES,
  log,
}).catch((error: unknown) => {
  log.fatal({ err: error }, 'devnet start-up failed');
  process.exit(1);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'devnet shutting down');
    devnet.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
