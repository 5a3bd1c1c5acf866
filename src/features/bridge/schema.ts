import { z } from '@hono/zod-openapi';
import { DESTINATION_TYPES } from './tables.js';
import { usdAmountSchema } from '../../http/validation.js';
import { parseUsd } from '../../money.js';

const positiveUsd = usdAmountSchema.refine((value) => (parseUsd(value) ?? 0n) > 0n, 'must be more than 0');
const OfframpFields = {
  amount: positiveUsd.openapi({ description: 'USD decimal, more than 0, at most the wallet balance not already promised to waiting off-ramps.', example: '250.00' }),
  destinationType: z.enum(DESTINATION_TYPES),
  bankAccountId: z.string().min(1).max(200).openapi({ description: 'A bank account registered for this employee (`bank_account_id` of its bank-accounts list).' }),
};
export const OfframpBody = z.object(OfframpFields);
export const PaidOfframpBody = z.object({ employeeId: z.uuid(), ...OfframpFields });
export const OfframpResult = z
  .object({
    success: z.boolean(),
    transfer_id: z.uuid(),
    bridge_transfer_id: z.string().nullable(),
    status: z.string().openapi({ description: '`awaiting_funds` -> `funds_received` -> `payment_submitted` -> `payment_processed`; or `canceled`, `error`, `returned`.' }),
    amount: z.string(),
    destination_type: z.enum(DESTINATION_TYPES),
    created_at: z.string().openapi({ format: 'date-time' }),
    deposit_instructions: z
      .object({ network: z.string(), token: z.string(), from_address: z.string(), to_address: z.string(), amount: z.string() })
      .nullable()
      .openapi({ description: 'Send exactly this from the wallet; the provider pays the bank once it arrives.' }),
  })
  .openapi('OfframpTransfer');
export const OfframpList = z.object({ employee_id: z.uuid(), transfers: z.array(OfframpResult) }).openapi('OfframpTransfers');

export const WalletBalance = z
  .object({
    employee_id: z.uuid(),
    wallet_address: z.string().nullable(),
    network: z.string(),
    token: z.string(),
    balance: z.string().openapi({ description: 'Base units (6 decimals); "0" without a wallet.' }),
    balance_usd: z.string(),
    as_of: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WalletBalance');

export const KycResult = z
  .object({
    employee_id: z.uuid(),
    bridge_customer_id: z.string(),
    kyc_status: z.string(),
    kyc_link: z.string().openapi({ description: 'A fresh hosted KYC link to send to the employee.' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('KycLink');

export const Card = z
  .object({ id: z.uuid(), status: z.string(), last4: z.string().nullable(), created_at: z.string().openapi({ format: 'date-time' }) })
  .openapi('Card');
export const CardResult = z.object({ employee_id: z.uuid(), card: Card.nullable() }).openapi('EmployeeCard');

export const BankAccountBody = z.object({
  destinationType: z.enum(DESTINATION_TYPES),
  accountOwnerName: z.string().trim().min(1).max(200),
  details: z
    .record(z.string().max(64), z.string().max(200))
    .refine((d) => Object.keys(d).length <= 20, 'at most 20 fields')
    .openapi({
      description: 'ach: routingNumber, accountNumber; sepa: iban; spei: clabe; pix: pixKey.',
      example: { routingNumber: '021000021', accountNumber: '000123456789' },
    }),
  label: z.string().trim().min(1).max(100).optional(),
});
export const BankAccount = z
  .object({ id: z.uuid(), bank_account_id: z.string(), destination_type: z.enum(DESTINATION_TYPES), last4: z.string().nullable(), label: z.string().nullable(), created_at: z.string() })
  .openapi('BankAccount');
export const BankAccounts = z.object({ employee_id: z.uuid(), bank_accounts: z.array(BankAccount) }).openapi('BankAccounts');
