/** Anything that answers EIP-1193 style requests: the embedded EVMs and Solana alike. */
export interface RpcTarget {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}

type RpcResponse = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };

const MAX_BATCH = 100;
const failure = (id: unknown, code: number, message: string): RpcResponse => ({ jsonrpc: '2.0', id, error: { code, message } });

/**
 * JSON-RPC 2.0 over an embedded chain, for unmodified clients (viem, mppx, x402, @solana/kit). Anything
 * malformed gets a JSON-RPC error object, never an exception.
 */
export async function answerJsonRpc(target: RpcTarget, body: string): Promise<RpcResponse | RpcResponse[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return failure(null, -32700, 'Parse error');
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0 || parsed.length > MAX_BATCH) return failure(null, -32600, `Invalid Request: a batch holds 1-${MAX_BATCH} calls`);
    return Promise.all(parsed.map((call) => answerOne(target, call)));
  }
  return answerOne(target, parsed);
}

async function answerOne(target: RpcTarget, call: unknown): Promise<RpcResponse> {
  if (typeof call !== 'object' || call === null) return failure(null, -32600, 'Invalid Request');
  const { jsonrpc, id = null, method, params } = call as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return failure(id, -32600, 'Invalid Request');
  if (params !== undefined && !Array.isArray(params)) return failure(id, -32602, 'Invalid params: must be an array');
  try {
    const result = await target.request({ method, params });
    return { jsonrpc: '2.0', id, result };
  } catch (error) {
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    return {
      jsonrpc: '2.0',
      id,
      error: {
        code: typeof code === 'number' ? code : -32603,
        message: typeof message === 'string' ? message : 'Internal error',
        ...(data === undefined ? {} : { data }),
      },
    };
  }
}
