import { rules, type FieldSpec, type Rule } from '../../../lib/form';
import type { Schema } from '../../../lib/api';
import { BANK_DETAIL_PROBLEM, sepaOwnerProblem as serverSepaOwnerProblem, type BankDetailKey } from '../../../../../src/providers/bridge/bank-details';

/**
 * The server's own bank-detail checks (src/providers/bridge/bank-details.ts, imported), per field, so
 * the form shows every problem at once before anything is sent; the server checks them all again.
 */

export type DestinationType = Schema<'BankAccount'>['destination_type'];
export type DetailKey = BankDetailKey;
export type BankField = 'accountOwnerName' | `details.${DetailKey}` | 'label';

/** A detail's own check, the server's (shared, pure): on the trimmed text the form sends. */
const serverCheck =
  (key: DetailKey): Rule =>
  (value) =>
    value.trim() ? BANK_DETAIL_PROBLEM[key](value.trim()) : null;

const DETAIL_SPECS: Record<DetailKey, FieldSpec> = {
  routingNumber: { label: 'Routing number', rules: [rules.required, serverCheck('routingNumber')] },
  accountNumber: { label: 'Account number', rules: [rules.required, serverCheck('accountNumber')] },
  iban: { label: 'IBAN', rules: [rules.required, serverCheck('iban')] },
  clabe: { label: 'CLABE', rules: [rules.required, serverCheck('clabe')] },
  pixKey: { label: 'PIX key', rules: [rules.required, serverCheck('pixKey')] },
};

export const DESTINATIONS: Record<DestinationType, { name: string; details: DetailKey[] }> = {
  ach: { name: 'US bank (ACH)', details: ['routingNumber', 'accountNumber'] },
  sepa: { name: 'Euro bank (SEPA)', details: ['iban'] },
  spei: { name: 'Mexican bank (SPEI)', details: ['clabe'] },
  pix: { name: 'Brazil (PIX)', details: ['pixKey'] },
};

/** The form's fields for a destination type: the holder, that type's details, the nickname (BankAccountBody). */
export function bankFieldSpecs(type: DestinationType): Partial<Record<BankField, FieldSpec>> {
  const specs: Partial<Record<BankField, FieldSpec>> = {
    accountOwnerName: { label: 'Account holder name', rules: [rules.required, rules.maxLength(200)] },
  };
  for (const key of DESTINATIONS[type].details) specs[`details.${key}`] = DETAIL_SPECS[key];
  specs.label = { label: 'Nickname', rules: [rules.maxLength(100)] };
  return specs;
}

/** The one check across fields: Bridge names a SEPA account's owner by first and last name. */
export function sepaOwnerProblem(type: DestinationType, owner: string): string | null {
  const problem = type === 'sepa' && owner.trim() ? serverSepaOwnerProblem(owner.trim()) : null;
  return problem ? `Account holder name ${problem}` : null;
}
