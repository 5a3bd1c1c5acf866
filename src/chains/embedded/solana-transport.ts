import type { RpcTransport } from '@solana/kit';
import { answerJsonRpc, type RpcTarget } from './json-rpc.js';

/**
 * A @solana/kit transport into the embedded chain's JSON-RPC, in process: the payload goes
 * through the same JSON encoding as over HTTP (kit sends bigints, which JSON cannot carry).
 */
export function embeddedSolanaTransport(rpc: RpcTarget): RpcTransport {
  return (async ({ payload }) => {
    const body = JSON.stringify(payload, (_, value: unknown) => (typeof value === 'bigint' ? `${BIGINT}${value}` : value)).replace(
      new RegExp(`"${BIGINT}(-?\\d+)"`, 'g'),
      '$1',
    );
    return answerJsonRpc(rpc, body);
  }) as RpcTransport;
}

const BIGINT = '__bigint__:';
