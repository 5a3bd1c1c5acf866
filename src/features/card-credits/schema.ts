import { z } from '@hono/zod-openapi';
import { CARD_CREDIT_STATUSES } from '../../payments/tables.js';
import { EmployerIdParams } from '../employers/index.js';

export const CreditIdParams = z.object({ id: z.uuid().openapi({ description: 'The card credit id (the `Payment-Credit` response header).' }) });
export const BilledCreditParams = EmployerIdParams.extend({ creditId: z.uuid().openapi({ description: 'The card credit id.' }) });

export const CardCredit = z
  .object({
    id: z.uuid(),
    route: z.string().openapi({ description: 'The route it pays for.', example: 'POST /api/mpp/bridge/offramp' }),
    status: z.enum(CARD_CREDIT_STATUSES).openapi({ description: 'open: calls draw on it; refunding: its remainder is on its way back to the card; refunded: it is.' }),
    funded_usd: z.string().openapi({ description: 'The card top-up.', example: '0.50' }),
    drawn_usd: z.string().openapi({ description: 'Fees drawn for calls (a failed call gives its fee back).', example: '0.25' }),
    remaining_usd: z.string().openapi({ example: '0.25' }),
    refunded_usd: z.string().openapi({ description: 'The remainder sent back to the card.', example: '0.00' }),
    payment_intent: z.string().openapi({ description: "The top-up's card charge at the processor." }),
    created_at: z.string().openapi({ format: 'date-time' }),
    refunded_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('CardCredit');

export const HeldCardCredits = z
  .object({
    credits: z.array(CardCredit),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('HeldCardCredits');

export const CardCredits = z
  .object({
    employer_id: z.uuid(),
    credits: z.array(CardCredit),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('CardCredits');
