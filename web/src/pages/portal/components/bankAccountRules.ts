import { rules, type FieldSpec, type Rule } from '../../../lib/form';
import type { Schema } from '../../../lib/api';

/**
 * The server's bank-detail checks (src/providers/bridge/validation.ts, the same words), so the form
 * shows every problem at once before anything is sent; the server checks them all again.
 */

export type DestinationType = Schema<'BankAccount'>['destination_type'];
export type DetailKey = 'routingNumber' | 'accountNumber' | 'iban' | 'clabe' | 'pixKey';
export type BankField = 'accountOwnerName' | `details.${DetailKey}` | 'label';

/** ISO alpha-2 prefixes of the IBANs SEPA reaches (the server's SEPA_COUNTRIES keys). */
const SEPA_COUNTRIES = new Set(
  'AD AL AT BE BG CH CY CZ DE DK EE ES FI FR GB GI GR HR HU IE IS IT LI LT LU LV MC MD ME MK MT NL NO PL PT RO SE SI SK SM VA'.split(' '),
);

/** ABA routing number: weights 3, 7, 1 sum to a multiple of 10, and a Federal Reserve prefix. */
function isAbaRoutingNumber(routing: string): boolean {
  const prefix = Number(routing.slice(0, 2));
  const knownPrefix = (prefix >= 1 && prefix <= 12) || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  const sum = [...routing].reduce((total, digit, i) => total + [3, 7, 1][i % 3]! * Number(digit), 0);
  return knownPrefix && sum % 10 === 0;
}

/** ISO 13616: country and check digits moved to the end, letters as 10-35, mod 97 is 1. */
function hasIbanChecksum(iban: string): boolean {
  let remainder = 0;
  for (const char of iban.slice(4) + iban.slice(0, 4)) {
    const value = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** CLABE: weights 3, 7, 1 over the first 17 digits, each product mod 10. */
function clabeCheckDigit(clabe: string): number {
  let sum = 0;
  for (let i = 0; i < 17; i += 1) sum += (Number(clabe[i]) * [3, 7, 1][i % 3]!) % 10;
  return (10 - (sum % 10)) % 10;
}

const routingChecksum: Rule = (value) => (/^\d{9}$/.test(value.trim()) && !isAbaRoutingNumber(value.trim()) ? 'is not a valid ABA routing number' : null);
const clabeChecksum: Rule = (value) => (/^\d{18}$/.test(value.trim()) && clabeCheckDigit(value.trim()) !== Number(value.trim()[17]) ? 'has a wrong check digit' : null);
const iban: Rule = (value) => {
  const text = value.replace(/ /g, '').toUpperCase();
  if (!text) return null;
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(text)) return 'is not an IBAN';
  if (!hasIbanChecksum(text)) return 'fails the IBAN checksum';
  return SEPA_COUNTRIES.has(text.slice(0, 2)) ? null : `is from ${text.slice(0, 2)}, which SEPA does not reach`;
};

const DETAIL_SPECS: Record<DetailKey, FieldSpec> = {
  routingNumber: { label: 'Routing number', rules: [rules.required, rules.matches(/^\d{9}$/, 'must be 9 digits'), routingChecksum] },
  accountNumber: { label: 'Account number', rules: [rules.required, rules.matches(/^\d{4,17}$/, 'must be 4-17 digits')] },
  iban: { label: 'IBAN', rules: [rules.required, iban] },
  clabe: { label: 'CLABE', rules: [rules.required, rules.matches(/^\d{18}$/, 'must be 18 digits'), clabeChecksum] },
  pixKey: { label: 'PIX key', rules: [rules.required, rules.matches(/^[\s\S]{1,77}$/, 'must be 1-77 characters without surrounding spaces')] },
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
  return type === 'sepa' && owner.trim() && !owner.trim().includes(' ') ? 'Account holder name must hold a first and a last name for a SEPA account' : null;
}
