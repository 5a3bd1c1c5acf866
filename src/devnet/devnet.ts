import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Logger } from 'pino';
import { openEmbeddedChains, stopAtOnce, type EmbeddedChains } from '../chains/embedded/index.js';
import { openDatabase } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { devnetApp } from './server.js';

export interface DevnetOptions {
  port: number;
  host: string;
  /** PostgreSQL for the chain journal; without it, PGlite under `dataDir`. */
  databaseUrl?: string | undefined;
  /** null keeps PGlite in memory (tests). */
  dataDir: string | null;
  /** The virtual-address registry's difficulty when the chains are first created. */
  virtualMasterZeroBytes: number;
  log: Logger;
}

export interface RunningDevnet {
  url: string;
  chains: EmbeddedChains;
  close(): Promise<void>;
}

/** The embedded chains in a process of their own, journaled in their own database (`npm run devnet`). */
export async function startDevnet(options: DevnetOptions): Promise<RunningDevnet> {
  const database = await openDatabase({ url: options.databaseUrl, dataDir: options.databaseUrl ? null : options.dataDir });
  try {
    await migrate(database);
    const chains = await openEmbeddedChains(database, { virtualMasterZeroBytes: options.virtualMasterZeroBytes, onJournalLost: stopAtOnce(options.log) });
    const server = await new Promise<ServerType>((resolve, reject) => {
      const listening = serve({ fetch: devnetApp(chains).fetch, port: options.port, hostname: options.host }, () => resolve(listening));
      listening.once('error', reject);
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
    options.log.info({ url, tempo: chains.tempo.chain.id, base: chains.base.chain.id, solana: chains.solana.network }, 'devnet ready');
    return {
      url,
      chains,
      async close() {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await chains.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}
