/**
 * The employee's salary stream (rate and start of accrual) for the live balance.
 *
 * Gap: the API has no free route that tells an employee their accrual rate or stream: the only
 * one is the paid per-tick SSE (`GET /api/mpp/employee/balance/stream`, $0.001 a tick on rail A).
 * Until there is one, this reads the stream straight from the StreamVesting contract through the
 * local-mode chain endpoints (`GET /api/dev/chains`, `POST /api/dev/rpc/tempo`, `streamOf(address)`).
 * In live mode those answer 404 and the portal shows the wallet balance without accrual.
 */
export interface StreamInfo {
  active: boolean;
  /** Base units per second. */
  ratePerSecond: bigint;
  /** Unix seconds from which the unclaimed amount accrues (the chain's clock). */
  accruingSince: bigint;
}

export type StreamLookup = { kind: 'stream'; stream: StreamInfo } | { kind: 'unavailable' };

/** keccak256("streamOf(address)")[0..4] */
const STREAM_OF = '0xb8fa9f2b';

interface DevChains {
  networks: { network: string; rpc_url: string; contracts: Record<string, string> }[];
}

let tempoChain: Promise<{ rpcUrl: string; streamVesting: string } | null> | null = null;

function findTempo(): Promise<{ rpcUrl: string; streamVesting: string } | null> {
  tempoChain ??= fetch('/api/dev/chains', { headers: { accept: 'application/json' } })
    .then(async (response) => {
      if (!response.ok) return null;
      const chains = (await response.json()) as DevChains;
      const tempo = chains.networks.find((n) => n.network === 'eip155:4217' && n.contracts.streamVesting);
      return tempo ? { rpcUrl: tempo.rpc_url, streamVesting: tempo.contracts.streamVesting! } : null;
    })
    .catch(() => {
      tempoChain = null; // a network error: ask again next time
      return null;
    });
  return tempoChain;
}

const word = (hex: string, index: number) => BigInt(`0x${hex.slice(2 + index * 64, 2 + (index + 1) * 64) || '0'}`);

export async function readStream(wallet: string): Promise<StreamLookup> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) return { kind: 'unavailable' };
  const tempo = await findTempo();
  if (!tempo) return { kind: 'unavailable' };
  const data = `${STREAM_OF}${wallet.slice(2).toLowerCase().padStart(64, '0')}`;
  const response = await fetch(tempo.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: tempo.streamVesting, data }, 'latest'] }),
  });
  if (!response.ok) return { kind: 'unavailable' };
  const answer = (await response.json()) as { result?: string };
  if (typeof answer.result !== 'string' || answer.result.length < 2 + 64 * 4) return { kind: 'unavailable' };
  // streamOf -> (accountId, ratePerSecond, accruingSince, active)
  return { kind: 'stream', stream: { ratePerSecond: word(answer.result, 1), accruingSince: word(answer.result, 2), active: word(answer.result, 3) !== 0n } };
}

/** What has accrued at `nowMs`, to the millisecond (the contract counts whole seconds; the display runs smoothly). */
export function accruedAt(stream: StreamInfo, nowMs: number): bigint {
  if (!stream.active || stream.ratePerSecond === 0n) return 0n;
  const elapsedMs = BigInt(Math.floor(nowMs)) - stream.accruingSince * 1000n;
  return elapsedMs > 0n ? (elapsedMs * stream.ratePerSecond) / 1000n : 0n;
}
