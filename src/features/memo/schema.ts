import { z } from '@hono/zod-openapi';
import { MEMO_PATTERN, MEMO_TYPES } from './codec.js';

export const MemoFieldsSchema = z
  .object({
    version: z.number().int(),
    type: z.enum(Object.keys(MEMO_TYPES) as [keyof typeof MEMO_TYPES]),
    employer_tag: z.string().openapi({ description: 'First 4 bytes of SHA-256 of the employer id.' }),
    employee_tag: z.string().openapi({ description: 'First 4 bytes of SHA-256 of the employee id.' }),
    pay_period_start: z.string().nullable().openapi({ format: 'date' }),
    pay_period_end: z.string().nullable().openapi({ format: 'date' }),
    cost_centre_tag: z.string().nullable(),
    record_hash: z.string().openapi({ description: '12 bytes binding the memo to one payroll item (run, employee, amount).' }),
  })
  .openapi('MemoFields');

export const MemoSchema = z.string().regex(MEMO_PATTERN, 'must be 0x followed by 64 hex characters (32 bytes)');

export const DecodeBody = z.object({ memo: MemoSchema }).openapi('MemoDecodeRequest');
export const Decoded = z
  .object({
    memo: z.string(),
    fields: MemoFieldsSchema.nullable().openapi({ description: 'null when the 32 bytes are not one of our memos.' }),
  })
  .openapi('MemoDecodeResult');
