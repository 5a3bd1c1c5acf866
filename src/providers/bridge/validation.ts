import { BANK_DETAIL_PROBLEM, normaliseIban, sepaOwnerProblem, type BankDetailKey } from './bank-details.js';
import { BridgeError, DESTINATION_TYPES, type DestinationType } from './provider.js';

/**
 * Bank details per destination type, checked the same way by both adapters before anything is
 * stored or sent: a typo in an account number must fail here, not days later as a returned payment.
 */

export interface ExternalAccountInput {
  destinationType: DestinationType;
  accountOwnerName: string;
  details: Record<string, string>;
}

export interface ValidatedExternalAccount {
  /** The details as they should be sent on (an IBAN without spaces, upper-cased). */
  details: Record<string, string>;
  last4: string;
}

/** Checks an external account; throws BridgeError('invalid') naming the first bad field. */
export function validateExternalAccount(input: ExternalAccountInput): ValidatedExternalAccount {
  if (!DESTINATION_TYPES.includes(input.destinationType)) {
    throw invalid('destinationType', `must be one of ${DESTINATION_TYPES.join(', ')}`);
  }
  const owner = typeof input.accountOwnerName === 'string' ? input.accountOwnerName.trim() : '';
  if (owner.length === 0 || owner.length > 256) throw invalid('accountOwnerName', 'must be 1-256 characters');

  const details = { ...input.details };
  switch (input.destinationType) {
    case 'ach': {
      checked(details, 'routingNumber');
      return { details, last4: checked(details, 'accountNumber').slice(-4) };
    }
    case 'sepa': {
      const iban = normaliseIban(checked(details, 'iban'));
      const ownerProblem = sepaOwnerProblem(owner);
      if (ownerProblem) throw invalid('accountOwnerName', ownerProblem);
      details.iban = iban;
      return { details, last4: iban.slice(-4) };
    }
    case 'spei':
      return { details, last4: checked(details, 'clabe').slice(-4) };
    case 'pix':
      return { details, last4: checked(details, 'pixKey').slice(-4) };
  }
}

/** A detail, present and passing its check (bank-details.ts). */
function checked(details: Record<string, string>, name: BankDetailKey): string {
  const value = details[name];
  if (typeof value !== 'string' || value.length === 0) throw invalid(`details.${name}`, 'is required');
  const problem = BANK_DETAIL_PROBLEM[name](value);
  if (problem) throw invalid(`details.${name}`, problem);
  return value;
}

const invalid = (field: string, problem: string) => new BridgeError('invalid', `${field} ${problem}`);
