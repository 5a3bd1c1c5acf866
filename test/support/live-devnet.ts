import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createKeyPairSignerFromPrivateKeyBytes } from '@solana/kit';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { deployLiveContracts } from '../../src/chains/contracts/deploy-live.js';
import { loadConfig, loadDeployConfig, type Config } from '../../src/config.js';
import { startDevnet, type RunningDevnet } from '../../src/devnet/devnet.js';
import type { DevnetInfo } from '../../src/devnet/server.js';
import { serviceLogger } from '../../src/log.js';
import { startService, type RunningService } from '../../src/service.js';
import { createTestDatabaseTarget } from './database.js';
import { freePort } from './service-process.js';

/** Live mode needs PostgreSQL (DATABASE_URL is a live requirement): without TEST_DATABASE_URL, skip. */
export const liveDevnetAvailable = Boolean(process.env.TEST_DATABASE_URL);

export interface LiveDevnetRun {
  /** The service's base URL. */
  url: string;
  /** Every log line the service wrote, as written (JSON). */
  logs: string[];
  /** The settings the service was started with: every LIVE_REQUIRED one, secrets included. */
  env: Record<string, string>;
  /** The devnet the live settings point at (its faucet funds payers: POST `${devnet.url}/faucet`). */
  devnet: RunningDevnet;
  /** An ID token from the identity provider whose JWKS the service trusts (IDP_JWKS_URL). */
  idToken(subject: string): Promise<string>;
  stop(): Promise<void>;
}

export interface LiveDevnetOptions {
  /** Changes to the live settings before start-up (a bogus contract, a wrong RPC). */
  env?: (env: Record<string, string>) => Record<string, string>;
}

/**
 * The service in LIVE mode (APP_MODE=live, every live setting filled) against a devnet started here:
 * Tempo, Base and Solana RPC at the devnet, our Tempo contracts deployed there by deploy:contracts
 * with the service key, x402 through the devnet's facilitator API, an identity provider's JWKS and a
 * mail server served here, PostgreSQL from TEST_DATABASE_URL. If start-up fails, everything started
 * is stopped and the error is thrown (its message is the start-up refusal).
 */
export async function startLiveDevnet(options: LiveDevnetOptions = {}): Promise<LiveDevnetRun> {
  if (!liveDevnetAvailable) throw new Error('a live-mode run needs TEST_DATABASE_URL (check liveDevnetAvailable first)');
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => {});
  };
  try {
    const devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 0, log: pino({ level: 'silent' }) });
    stops.push(() => devnet.close());
    const info = (await (await fetch(devnet.url)).json()) as DevnetInfo;
    const idp = await serveIdentityProvider();
    stops.push(idp.close);
    const smtp = await serveDummySmtp();
    stops.push(smtp.close);
    const database = await createTestDatabaseTarget();
    stops.push(database.drop);

    const evmKey = generatePrivateKey();
    const solanaSeed = randomBytes(32);
    const solanaAddress = (await createKeyPairSignerFromPrivateKeyBytes(solanaSeed)).address;
    const fund = (network: string, address: string) => devnetFaucet(devnet.url, network, address, '1.00');
    await fund('eip155:4217', privateKeyToAccount(evmKey).address);
    await fund('eip155:8453', privateKeyToAccount(evmKey).address);
    await fund(info.solana.network, solanaAddress);

    const natives = { stablecoin: info.tempo.contracts.stablecoin, tip403Registry: info.tempo.contracts.tip403Registry, addressRegistry: info.tempo.contracts.addressRegistry };
    const tempoRpcUrl = `${devnet.url}/tempo`;
    const deployed = await deployLiveContracts(
      loadDeployConfig('tempo', { TEMPO_RPC_URL: tempoRpcUrl, EVM_SERVICE_KEY: evmKey, TEMPO_CONTRACTS: JSON.stringify(natives) }),
    );
    if (deployed.network !== 'tempo') throw new Error('deploy:contracts deployed nothing on Tempo');

    const port = await freePort();
    const signingKey = await generateKeyPair('ES256', { extractable: true });
    const defaults: Record<string, string> = {
      APP_MODE: 'live',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: database.url!,
      LOG_LEVEL: 'info',
      IDP_JWKS_URL: idp.jwksUrl,
      IDP_ISSUER: IDP_ISSUER,
      IDP_AUDIENCE: IDP_AUDIENCE,
      TEMPO_RPC_URL: tempoRpcUrl,
      BASE_RPC_URL: `${devnet.url}/base`,
      SOLANA_RPC_URL: `${devnet.url}/solana`,
      X402_FACILITATOR_URL: `${devnet.url}/x402`,
      MPP_SECRET_KEY: randomBytes(32).toString('hex'),
      AGENT_SECRETS_KEY: randomBytes(32).toString('hex'),
      OAUTH_SIGNING_KEY: JSON.stringify(await exportJWK(signingKey.privateKey)),
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'payroll@example.test',
      EVM_SERVICE_KEY: evmKey,
      SOLANA_SERVICE_KEY: solanaSeed.toString('hex'),
      TEMPO_CONTRACTS: JSON.stringify(deployed.tempoContracts),
      BASE_USDC_ADDRESS: info.base.contracts.stablecoin!,
      SOLANA_USDC_MINT: info.solana.mint,
      SOLANA_NETWORK: info.solana.network,
    };
    const env = options.env ? options.env(defaults) : defaults;
    const logs: string[] = [];
    const config = loadConfig(env);
    const service: RunningService = await startService(config, capturingLogger(logs, config));
    stops.push(() => service.close());
    return { url: service.url, logs, env, devnet, idToken: idp.idToken, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const IDP_ISSUER = 'https://idp.example.test';
const IDP_AUDIENCE = 'payroll-live-devnet';

/** The service's logger (src/log.ts `serviceLogger`, as src/main.ts runs it) writing its lines into `lines`. */
function capturingLogger(lines: string[], config: Config) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return serviceLogger(config, sink);
}

async function devnetFaucet(devnetUrl: string, network: string, address: string, amount: string): Promise<void> {
  const response = await fetch(`${devnetUrl}/faucet`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network, address, amount }),
  });
  if (!response.ok) throw new Error(`devnet faucet answered ${response.status}: ${await response.text()}`);
}

/** An identity provider's JWKS endpoint on loopback, and tokens signed by its key. */
async function serveIdentityProvider(): Promise<{ jwksUrl: string; idToken(subject: string): Promise<string>; close(): Promise<void> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'live-devnet', alg: 'ES256', use: 'sig' };
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  const url = await listenOnLoopback(server);
  return {
    jwksUrl: `${url}/.well-known/jwks.json`,
    idToken: (subject) => signIdToken(privateKey, subject),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function signIdToken(key: CryptoKey, subject: string): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'live-devnet' }).setIssuer(IDP_ISSUER).setAudience(IDP_AUDIENCE).setSubject(subject).setIssuedAt().setExpirationTime('10m').sign(key);
}

/** A mail server that accepts every message and keeps none (SMTP_URL). */
async function serveDummySmtp(): Promise<{ url: string; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    let inData = false;
    socket.write('220 dummy ESMTP\r\n');
    socket.on('data', (chunk) => {
      for (const line of chunk.toString().split('\r\n').filter((l, i, all) => l !== '' || i < all.length - 1)) {
        if (inData) {
          if (line === '.') {
            inData = false;
            socket.write('250 OK queued\r\n');
          }
        } else if (/^(EHLO|HELO)/i.test(line)) socket.write('250 dummy\r\n');
        else if (/^DATA/i.test(line)) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
        else if (line !== '') socket.write('250 OK\r\n');
      }
    });
    socket.on('error', () => {});
  });
  const url = await listenOnLoopback(server);
  return { url: url.replace(/^http:/, 'smtp:'), close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function listenOnLoopback(server: net.Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}
