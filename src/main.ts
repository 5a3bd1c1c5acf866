import './heap.js';
import { ConfigError, loadConfig } from './config.js';
import { serviceLogger } from './log.js';
import { startService } from './service.js';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

const log = serviceLogger(config);
const started = performance.now();
const service = await startService(config, log).catch((error: unknown) => {
  log.fatal({ err: error }, 'start-up failed');
  process.exit(1);
});
log.info({ url: service.url, mode: config.mode, ms: Math.round(performance.now() - started) }, 'ready');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      log.info({ signal }, 'already shutting down');
      return;
    }
    stopping = true;
    log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'shutting down');
    // The backstop: whatever still hangs at the deadline (a socket, the database), the process ends.
    setTimeout(() => {
      log.error('shutdown deadline passed: exiting anyway');
      process.exit(1);
    }, config.shutdownGraceSeconds * 1000).unref();
    service.close().then(
      ({ clean }) => process.exit(clean ? 0 : 1),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
