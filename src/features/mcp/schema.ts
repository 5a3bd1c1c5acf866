import { z } from '@hono/zod-openapi';

/** A JSON-RPC 2.0 request or notification, as the MCP route documents it (the SDK transport validates). */
export const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().openapi({ example: 'tools/call' }),
    params: z.object({}).loose().optional(),
  })
  .loose()
  .openapi('JsonRpcMessage');

export const JsonRpcResponse = z
  .object({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]).nullable(), result: z.object({}).loose().optional(), error: z.object({}).loose().optional() })
  .openapi('JsonRpcResponse');
