import { z } from '@hono/zod-openapi';

export const RunAgentBody = z
  .object({ scenario: z.enum(['tour']).default('tour').openapi({ description: 'The only scenario: the paid-route tour.' }) })
  .openapi('DemoRunAgentRequest');

export const DemoStepEvent = z
  .object({
    step: z.number().int().openapi({ description: '1, 2, 3, ... in order.' }),
    kind: z.enum(['info', 'request', 'payment', 'result', 'error']),
    message: z.string().openapi({ description: 'Human narration.' }),
    route: z.string().optional().openapi({ example: 'GET /api/mpp/treasury/yield-rates' }),
    rail: z.enum(['A', 'B', 'C']).optional(),
    status: z.number().int().optional().openapi({ description: 'HTTP status: 402 on the unpaid call and on the offer being paid, then the paid answer.' }),
    amount_usd: z.string().optional().openapi({ example: '0.010000', description: "The amount from the 402's offer (6 decimals)." }),
    reference: z.string().optional().openapi({ description: 'A transaction hash or signature: the faucet funding, the Payment-Receipt reference (A) or the x402 settlement (B, C).' }),
    data: z.unknown().optional().openapi({ description: 'Small JSON: the offers of a 402, a shortened response.' }),
  })
  .openapi('DemoStepEvent');

export const DemoDoneEvent = z
  .object({
    steps: z.number().int(),
    spent_usd: z.string().openapi({ example: '0.070000', description: 'Sum of the charged calls (those answered with a receipt).' }),
    calls: z.number().int().openapi({ description: 'Paid calls that were charged.' }),
  })
  .openapi('DemoDoneEvent');

/** The stream's events: `step`, repeated, then one `done`. */
export const DemoEventStream = z.union([DemoStepEvent, DemoDoneEvent]);
