import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { address } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { requestInit, type RequestOptions } from './app.js';

/** The service as `npm start` runs it (src/main.ts under tsx), in its own process. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Its exit code, or the signal that killed it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `nodeArgs`: options for node itself (a profiler, say). */
export function startServiceProcess(env: Record<string, string>, nodeArgs: string[] = []): ServiceProcess {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/**
 * `npm run devnet` in its own process, its journal in PGlite under `dataDir`; resolves once it
 * answers, with its URL.
 */
export async function startDevnetProcess(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // The devnet keeps its own journal, apart from any database the services use.
  const { DATABASE_URL: _services, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/devnet/main.ts'], {
    env: { ...env, DEVNET_PORT: String(port), DATA_DIR: dataDir, VIRTUAL_MASTER_ZERO_BYTES: '1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await fetch(url).catch(() => null))?.ok) {
    if (child.exitCode !== null) throw new Error(`the devnet exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('the devnet did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls /healthz until it answers 200; returns how long that took. */
export async function waitForHealthy(base: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    try {
      if ((await fetch(`${base}/healthz`)).status === 200) return Date.now() - started;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not healthy within ${timeoutMs} ms`);
}

/** A running local-mode service over loopback HTTP: requests, dev tokens and chain reads through /api/dev. */
export class RemoteService {
  constructor(readonly base: string) {}

  request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    return fetch(`${this.base}${path}`, requestInit(method, options));
  }

  async token(sub: string): Promise<string> {
    const response = await this.request('POST', '/api/dev/token', { body: { sub } });
    return ((await response.json()) as { token: string }).token;
  }

  async chains(): Promise<{ network: string; contracts: Record<string, string> }[]> {
    const { networks } = (await (await this.request('GET', '/api/dev/chains')).json()) as { networks: { network: string; contracts: Record<string, string> }[] };
    return networks;
  }

  private async rpc<T>(chain: 'tempo' | 'base' | 'solana', method: string, params: unknown[]): Promise<T> {
    const response = await this.request('POST', `/api/dev/rpc/${chain}`, { body: { jsonrpc: '2.0', id: 1, method, params } });
    return ((await response.json()) as { result: T }).result;
  }

  /** The stablecoin balance of `holder` on the embedded Tempo chain (balanceOf through eth_call). */
  async stablecoinBalance(holder: string): Promise<bigint> {
    const token = (await this.chains()).find((n) => n.network === 'eip155:4217')!.contracts.stablecoin!;
    return BigInt(await this.rpc<string>('tempo', 'eth_call', [{ to: token, data: `0x70a08231${holder.slice(2).padStart(64, '0')}` }, 'latest']));
  }

  /** The SPL token amount of `owner`'s associated account on the embedded Solana chain (0 without one). */
  async solanaTokenBalance(owner: string): Promise<bigint> {
    const mint = (await this.chains()).find((n) => n.network.startsWith('solana:'))!.contracts.mint!;
    const [ata] = await findAssociatedTokenPda({ mint: address(mint), owner: address(owner), tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const result = await this.rpc<{ value: { data: [string, string] } | null }>('solana', 'getAccountInfo', [ata, { encoding: 'base64' }]);
    return result.value ? Buffer.from(result.value.data[0], 'base64').readBigUInt64LE(64) : 0n;
  }
}
