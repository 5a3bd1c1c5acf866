import net from 'node:net';
import type { Chains } from '../../chains/index.js';
import type { Config } from '../../config.js';
import { ANTHROPIC_BASE_URL } from '../../providers/ai/anthropic.js';
import { OPENAI_BASE_URL } from '../../providers/ai/openai.js';
import { BRIDGE_API_BASE_URL } from '../../providers/bridge/http.js';

/** Why a dependency did not answer, without its error text (which may carry a URL with its key). */
export type FailureReason = 'timeout' | 'unreachable' | 'error';
export type DependencyState = { ok: true; latency_ms: number } | { ok: false; reason: FailureReason };

/** An outside system the service uses (a chain, a provider), asked whether it answers. */
export interface DependencyProbe {
  name: string;
  probe(signal: AbortSignal): Promise<void>;
}

const PROBE_TIMEOUT_MS = 3000;
/** Admin pages and every metrics scrape share one round of probes this recent (not to spend RPC quota). */
const REUSE_MS = 10_000;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);

/** The reason in an error's cause chain: a network code means unreachable, anything else an error. */
export function failureReason(error: unknown): FailureReason {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return 'unreachable';
  }
  return 'error';
}

/** Probes every dependency at once; the last round is reused for a few seconds. */
export class DependencyHealth {
  private last: { at: number; states: Promise<Record<string, DependencyState>> } | undefined;

  readonly probes: readonly DependencyProbe[];

  constructor({ probes }: { probes: readonly DependencyProbe[] }) {
    this.probes = probes;
  }

  check(): Promise<Record<string, DependencyState>> {
    if (!this.last || Date.now() - this.last.at > REUSE_MS) this.last = { at: Date.now(), states: this.probeAll() };
    return this.last.states;
  }

  private async probeAll(): Promise<Record<string, DependencyState>> {
    const states = await Promise.all(this.probes.map(async ({ name, probe }) => [name, await timed(probe)] as const));
    return Object.fromEntries(states);
  }
}

async function timed(probe: DependencyProbe['probe']): Promise<DependencyState> {
  const controller = new AbortController();
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), PROBE_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([probe(controller.signal).then(() => 'ok' as const), timeout]);
    if (outcome === 'timeout') return { ok: false, reason: 'timeout' };
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, reason: failureReason(error) };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** An HTTP service answers: any status below 500 (401 or 404 from an API root still proves it is there). */
export function httpProbe(name: string, url: string, init: RequestInit = {}): DependencyProbe {
  return {
    name,
    async probe(signal) {
      const res = await fetch(url, { ...init, signal, redirect: 'manual' });
      await res.body?.cancel();
      if (res.status >= 500) throw new Error(`status ${res.status}`);
    },
  };
}

/** An SMTP server accepts a TCP connection (no login: that would need a conversation per probe). */
export function tcpProbe(name: string, url: string): DependencyProbe {
  const { hostname, port, protocol } = new URL(url);
  const defaultPort = protocol === 'smtps:' ? 465 : 587;
  return {
    name,
    probe: (signal) =>
      new Promise((resolve, reject) => {
        const socket = net.connect({ host: hostname, port: Number(port) || defaultPort, signal });
        socket.once('connect', () => {
          socket.destroy();
          resolve();
        });
        socket.once('error', reject);
      }),
  };
}

/**
 * The outside systems of this deployment: the three chains (embedded ones too, through their
 * ports), and in live mode the x402 facilitator, the bridge, the AI provider and SMTP when set.
 */
export function dependencyProbes(config: Config, chains: Chains): DependencyProbe[] {
  const probes: DependencyProbe[] = [
    { name: 'tempo', probe: async () => void (await chains.tempo.blockNumber()) },
    { name: 'base', probe: async () => void (await chains.base.blockNumber()) },
    { name: 'solana', probe: async () => void (await chains.solana.blockHeight()) },
  ];
  if (config.mode !== 'live') return probes;
  const { live, bridge, ai } = config;
  if (live.x402FacilitatorUrl) probes.push(httpProbe('facilitator', `${live.x402FacilitatorUrl.replace(/\/$/, '')}/supported`));
  if (bridge.apiKey) probes.push(httpProbe('bridge', bridge.baseUrl ?? BRIDGE_API_BASE_URL));
  if (ai.provider !== 'offline') probes.push(httpProbe('ai', ai.baseUrl ?? (ai.provider === 'anthropic' ? ANTHROPIC_BASE_URL : OPENAI_BASE_URL)));
  if (live.smtpUrl) probes.push(tcpProbe('smtp', live.smtpUrl));
  return probes;
}
