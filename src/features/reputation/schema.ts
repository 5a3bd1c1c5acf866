import { z } from '@hono/zod-openapi';

const dateTime = z.string().openapi({ format: 'date-time' });
const baseUnits = z.string().regex(/^\d+$/).openapi({ description: 'Integer base units (6 decimals) as a decimal string.', example: '2500000' });

export const ReputationParams = z.object({
  address: z.string().openapi({
    param: { name: 'address', in: 'path' },
    description: 'A base58 Solana public key (32 bytes, 43-44 chars) or a decimal ERC-8004 agent id (no leading zeros). Anything else is a 400.',
    example: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
  }),
});

const SolanaDetail = z
  .object({
    attestationCount: z.number().int().openapi({ description: 'Attestations written to this key.' }),
    byType: z.record(z.string(), z.number().int()).openapi({ description: 'Count per attestation type, e.g. `svc-payment`, `svc-escrow-settled`.' }),
    totalValueMovedBaseUnits: baseUnits,
    latest: z
      .array(z.object({ type: z.string(), signature: z.string(), explorer_url: z.string(), written_at: dateTime }))
      .openapi({ description: 'The newest attestations (at most 10).' }),
  })
  .openapi('ReputationSolana', { description: 'Attestations the service wrote on Solana to the subject key (written ones only).' });

const TempoDetail = z
  .object({
    agentId: z.string().openapi({ example: '42' }),
    owner: z.string().nullable().openapi({ description: "The agent's owner in the ERC-8004 identity registry; null if no such agent." }),
    feedbackCount: z.number().int().openapi({ description: "Unrevoked feedback from the service's wallet, read from the reputation registry." }),
    averageScore: z.number().nullable().openapi({ description: 'Their average score (0-100, as the registry rounds it); null without feedback.' }),
    latest: z
      .array(z.object({ type: z.string(), tx_hash: z.string(), explorer_url: z.string().nullable(), written_at: dateTime }))
      .openapi({ description: 'The newest feedback the service wrote (at most 10).' }),
  })
  .openapi('ReputationTempo', { description: 'ERC-8004 feedback on Tempo for the subject agent id.' });

export const ReputationSummarySchema = z
  .object({
    subject: z.object({
      solana: z.string().nullable().openapi({ description: 'Non-EVM base58 public key.' }),
      tempo_agent_id: z.string().nullable().openapi({ description: 'Numeric ERC-8004 agent id.' }),
    }),
    solana: SolanaDetail.nullable(),
    tempo: TempoDetail.nullable(),
    unified: z.object({
      totalPayments: z.number().int().openapi({ description: 'Settled payments (x402 on Solana, agent/pay) with an artifact written.' }),
      totalValueMovedBaseUnits: baseUnits,
      agentFeedbackScore: z.number().nullable(),
      agentFeedbackCount: z.number().int(),
      workerAttestationCount: z.number().int().openapi({ description: 'Settled escrows attested to the worker key.' }),
      firstActivityAt: dateTime.nullable(),
      latestActivityAt: dateTime.nullable(),
    }),
    last_updated: dateTime,
  })
  .openapi('ReputationSummary');
